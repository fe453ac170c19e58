package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// KeySize is the length of a vault key: AES-256.
const KeySize = 32

// sealVersion is the first byte of every sealed value: it names the format
// (AES-256-GCM, 12-byte nonce, additional data project id then secret id),
// so a later format or key rotation can tell old values from new ones.
const sealVersion byte = 1

// ErrUnseal is returned when a sealed value does not open: another key,
// another project or secret (the additional data differs), or a damaged
// value. It never says which, and carries no plaintext.
var ErrUnseal = errors.New("secrets: sealed value does not open with this key, project and secret")

// Cipher seals and opens secret values with AES-256-GCM. Safe for
// concurrent use.
type Cipher struct{ aead cipher.AEAD }

// ParseKey decodes a vault key given as standard base64 (padded or not) of
// exactly KeySize bytes, as `openssl rand -base64 32` prints it.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		k, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, fmt.Errorf("vault key is not base64: %w", err)
	}
	if len(k) != KeySize {
		return nil, fmt.Errorf("vault key is %d bytes, want %d (base64 of 32 random bytes)", len(k), KeySize)
	}
	return k, nil
}

// DevKey is the fixed key of development mode (no key configured): derived
// from a public string, so anything sealed with it is readable by anyone
// with this source. It exists so `make up` and tests run without setup;
// production refuses to start without a real key.
func DevKey() []byte {
	k := sha256.Sum256([]byte("assay registry vault development key; not a secret"))
	return k[:]
}

// NewCipher returns a cipher over key (KeySize bytes).
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("vault key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("vault cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault cipher: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// additional binds a sealed value to its row: the project id, then the
// secret id. A value copied to another project, or onto another secret of
// the same project, does not open.
func additional(project, id uuid.UUID) []byte {
	ad := make([]byte, 0, 32)
	ad = append(ad, project[:]...)
	return append(ad, id[:]...)
}

// Seal encrypts plain for the secret id of project under a fresh random
// nonce: version byte, nonce, ciphertext and tag.
func (c *Cipher) Seal(project, id uuid.UUID, plain []byte) ([]byte, error) {
	ns := c.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(plain)+c.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("vault nonce: %w", err)
	}
	return c.aead.Seal(out, out[1:1+ns], plain, additional(project, id)), nil
}

// Open decrypts a value Seal returned for the same project and id; any
// other value, key, project or id is ErrUnseal.
func (c *Cipher) Open(project, id uuid.UUID, sealed []byte) ([]byte, error) {
	ns := c.aead.NonceSize()
	if len(sealed) < 1+ns+c.aead.Overhead() || sealed[0] != sealVersion {
		return nil, ErrUnseal
	}
	plain, err := c.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], additional(project, id))
	if err != nil {
		return nil, ErrUnseal
	}
	return plain, nil
}
