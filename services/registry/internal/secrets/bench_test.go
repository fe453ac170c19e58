package secrets

import (
	"testing"

	"github.com/google/uuid"
)

// The internal route opens every secret of the project on each runtime
// cache miss, and every create or update decodes and seals one.

func BenchmarkSealOpen(b *testing.B) {
	c, err := NewCipher(DevKey())
	if err != nil {
		b.Fatal(err)
	}
	p, id := uuid.New(), uuid.New()
	plain := []byte(`{"key":"sk-proj-0123456789abcdef0123456789abcdef0123456789abcdef","extras":{"X-Org":"acme"}}`)
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.Seal(p, id, plain)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Open(p, id, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"header":{"name":"My Ollama"},"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://127.0.0.1:11434/v1","key":"k","extras":{"X-Org":"acme"}},"models":[{"slug":"llama3"},{"slug":"qwen"}],"provider_slug":"ollama"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
