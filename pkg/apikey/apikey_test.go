package apikey_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/apikey"
)

func TestGenerateParseRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		k := apikey.Generate()
		assert.Regexp(t, `^[A-Za-z0-9]{8}\.[0-9a-f]{64}$`, k.String())
		p, ok := apikey.Parse(k.String())
		assert.True(t, ok)
		assert.Equal(t, k, p)
		assert.Len(t, k.Hash(), 64)
		assert.False(t, seen[k.Prefix], "prefixes are random")
		seen[k.Prefix] = true
	}
}

func TestParseRejects(t *testing.T) {
	good := "abcdEF12." + strings.Repeat("0a", 32)
	_, ok := apikey.Parse(good)
	assert.True(t, ok)
	for _, bad := range []string{"", ".", "abcdEF12", "abcdEF1." + strings.Repeat("0a", 32), "abcdEF12." + strings.Repeat("0a", 31),
		"abcd-F12." + strings.Repeat("0a", 32), "abcdEF12." + strings.Repeat("0g", 32), "abcdEF12." + strings.Repeat("0a", 32) + "0"} {
		_, ok := apikey.Parse(bad)
		assert.False(t, ok, bad)
	}
}

func TestFromAuthorization(t *testing.T) {
	for h, want := range map[string]string{"ApiKey abc": "abc", "apikey abc": "abc", "abc": "abc", "  ApiKey   abc ": "abc"} {
		got, ok := apikey.FromAuthorization(h)
		assert.True(t, ok, h)
		assert.Equal(t, want, got, h)
	}
	for _, h := range []string{"", "Bearer abc", "Access abc"} {
		_, ok := apikey.FromAuthorization(h)
		assert.False(t, ok, h)
	}
	// A lone scheme word is taken as a bare (legacy) key, which never parses.
	raw, _ := apikey.FromAuthorization("ApiKey ")
	_, ok := apikey.Parse(raw)
	assert.False(t, ok)
}

// FuzzAuthorization: no header value panics the parser, and whatever it
// accepts has the documented shape. Seeds in testdata/fuzz run as tests.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"ApiKey abcdEF12." + strings.Repeat("0a", 32), "Bearer x", "", "ApiKey ", "a.b", "ApiKey \x00.\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		raw, ok := apikey.FromAuthorization(h)
		if !ok {
			return
		}
		k, ok := apikey.Parse(raw)
		if !ok {
			return
		}
		if len(k.Prefix) != 8 || len(k.Secret) != 64 || k.String() != raw[:9]+strings.ToLower(raw[9:]) {
			t.Fatalf("accepted %q as %+v", raw, k)
		}
	})
}

// TestFromBasic: Langfuse's exporters send Basic base64(public:secret);
// the pair is our key's prefix and secret.
func TestFromBasic(t *testing.T) {
	k := apikey.Generate()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(k.Prefix+":"+k.Secret))
	raw, ok := apikey.FromBasic(basic)
	assert.True(t, ok)
	assert.Equal(t, k.String(), raw)
	raw, ok = apikey.FromBasic("basic  " + base64.StdEncoding.EncodeToString([]byte(k.Prefix+":"+k.Secret)) + " ")
	assert.True(t, ok, "the scheme word is case-insensitive")
	assert.Equal(t, k.String(), raw)
	for _, bad := range []string{"", "Basic", "Basic !!!", "Bearer " + k.String(), "ApiKey " + k.String(),
		"Basic " + base64.StdEncoding.EncodeToString([]byte(k.Prefix+k.Secret)),
		"Basic " + base64.StdEncoding.EncodeToString([]byte(":"+k.Secret)),
		"Basic " + base64.StdEncoding.EncodeToString([]byte(k.Prefix+":"))} {
		_, ok := apikey.FromBasic(bad)
		assert.False(t, ok, bad)
	}
}
