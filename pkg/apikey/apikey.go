// Package apikey generates, parses and verifies API keys.
//
// A key is "<prefix>.<secret>": 8 alphanumerics, a dot, 64 hex digits. The
// database keeps the prefix and the SHA-256 of the secret, never the secret.
// The gateway and the tracing service's OTLP ports verify keys with the same
// Verifier: read-only on the api_keys table, cached, and told of every change
// to that table through PostgreSQL NOTIFY so a revoked key stops working at once.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

const (
	prefixLen = 8
	secretLen = 64
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// Key is a parsed API key.
type Key struct {
	Prefix string
	Secret string
}

// String is the raw key, as handed to the client once.
func (k Key) String() string { return k.Prefix + "." + k.Secret }

// Hash is the hex SHA-256 of the secret, as stored.
func (k Key) Hash() string { return HashSecret(k.Secret) }

// HashSecret returns the hex SHA-256 of a secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Generate returns a new random key.
func Generate() Key {
	var b [prefixLen]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	p := make([]byte, prefixLen)
	for i, v := range b {
		p[i] = alnum[int(v)%len(alnum)]
	}
	var s [secretLen / 2]byte
	_, _ = rand.Read(s[:])
	return Key{Prefix: string(p), Secret: hex.EncodeToString(s[:])}
}

// Parse splits a raw key and checks its shape.
func Parse(raw string) (Key, bool) {
	prefix, secret, ok := strings.Cut(raw, ".")
	if !ok || len(prefix) != prefixLen || len(secret) != secretLen {
		return Key{}, false
	}
	for i := 0; i < len(prefix); i++ {
		if strings.IndexByte(alnum, prefix[i]) < 0 {
			return Key{}, false
		}
	}
	for i := 0; i < len(secret); i++ {
		c := secret[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return Key{}, false
		}
	}
	return Key{Prefix: prefix, Secret: strings.ToLower(secret)}, true
}

// FromAuthorization extracts the raw key from an Authorization header value:
// "ApiKey <key>", or a bare key without a scheme word (the legacy form the
// compatible platform still accepts). Any other scheme is not an API key.
func FromAuthorization(h string) (string, bool) {
	h = strings.TrimSpace(h)
	scheme, rest, found := strings.Cut(h, " ")
	if !found {
		return h, h != ""
	}
	if !strings.EqualFold(scheme, "ApiKey") {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	return rest, rest != ""
}

// FromBasic extracts the raw key from "Basic base64(<prefix>:<secret>)",
// the header Langfuse's SDKs build from a public and a secret key: the
// public key is the key's prefix, the secret key its secret, so the pair
// is the key "<prefix>.<secret>". Only the OTLP routes accept it (the
// gateway's and tracing's authenticate decide); anything else is not an
// API key.
func FromBasic(h string) (string, bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", false
	}
	public, secret, ok := strings.Cut(string(b), ":")
	if !ok || public == "" || secret == "" {
		return "", false
	}
	return public + "." + secret, true
}
