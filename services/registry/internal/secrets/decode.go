package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/errs"
)

// Limits on what one body may hold. Strings are counted in characters,
// except keys and header values, in bytes (what a provider receives).
const (
	MaxBodyBytes       = 64 << 10 // a whole create or update body; over it is a 413
	MaxSlugLen         = 255
	MaxNameLen         = 255
	MaxDescriptionLen  = 4096
	MaxKeyBytes        = 16 << 10 // long enough for a cloud service-account JSON
	MaxURLLen          = 2048
	MaxVersionLen      = 64
	MaxModels          = 256
	MaxExtras          = 32
	MaxExtraNameLen    = 128
	MaxExtraValueBytes = 8192
)

// ProviderKinds are the provider families a provider_key may name: the
// runtime's presets and the compatible platform's standard kinds.
var ProviderKinds = set("openai", "anthropic", "gemini", "mistral", "mistralai", "groq", "together_ai",
	"openrouter", "deepinfra", "cohere", "anyscale", "alephalpha", "perplexityai", "azure")

// CustomKinds are the kinds a custom_provider may have: "custom" (any
// OpenAI-compatible endpoint), the cloud families, and a standard family
// served at a URL of the project's own.
var CustomKinds = set("custom", "azure", "bedrock", "sagemaker", "vertex_ai", "openai", "anthropic", "gemini",
	"mistral", "mistralai", "groq", "together_ai", "openrouter", "deepinfra", "cohere", "anyscale",
	"alephalpha", "perplexityai")

// needsURL are the custom kinds that cannot be reached without a URL.
var needsURL = set("custom", "azure")

func set(ks ...string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

var (
	slugRE      = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)
	headerKeyRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // an HTTP token (RFC 9110)
)

// Input is a decoded and checked create or update body. A nil Header or
// Secret was absent (an update then keeps what is stored).
type Input struct {
	Header *HeaderIn
	Secret *SecretIn
}

// HeaderIn is the body's header. Slug is our extension: the compatible
// platform has no slug, so one is derived when it is absent.
type HeaderIn struct {
	Name        *string
	Description *string
	Slug        *string
}

// SecretIn is the body's secret: what it shows (Data) and what is sealed
// (Key, nil when absent; Extras, nil when absent).
type SecretIn struct {
	Kind   Kind
	Data   Data
	Key    *string
	Extras map[string]string
}

// field reads a JSON object member by member, each failure a 422 naming
// the member's location.
type field struct {
	m   map[string]json.RawMessage
	loc []any
}

func (f field) at(k ...any) []any { return append(append([]any{}, f.loc...), k...) }

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

// object decodes raw as a JSON object at loc; null or absent is (nil, nil).
func object(raw json.RawMessage, loc []any) (*field, error) {
	if isNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errs.Field("Input should be a valid dictionary", nil, loc...)
	}
	return &field{m: m, loc: loc}, nil
}

func (f field) sub(k string) (*field, error) { return object(f.m[k], f.at(k)) }

// str reads member k as a string of at most max characters (bytes when
// inBytes); control characters other than tab and newline are refused
// where line is false, all of them where it is true (header values).
func (f field) str(k string, max int, inBytes, line bool) (*string, error) {
	v := f.m[k]
	if isNull(v) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, errs.Field("Input should be a valid string", nil, f.at(k)...)
	}
	n := len(s)
	if !inBytes {
		n = utf8.RuneCountInString(s)
	}
	if n > max {
		unit := "characters"
		if inBytes {
			unit = "bytes"
		}
		return nil, errs.Field(fmt.Sprintf("String should have at most %d %s", max, unit), nil, f.at(k)...)
	}
	if err := checkText(s, line, f.at(k)); err != nil {
		return nil, err
	}
	return &s, nil
}

// checkText refuses NUL (PostgreSQL stores none) and, in single-line
// values sent as HTTP header values or URLs, every control character.
func checkText(s string, line bool, loc []any) error {
	for _, r := range s {
		if r == 0 || line && (r < 0x20 || r == 0x7f) {
			return errs.Field("String should not contain control characters", nil, loc...)
		}
	}
	return nil
}

func (f field) slug(k string) (*string, error) {
	s, err := f.str(k, MaxSlugLen, false, true)
	if err != nil || s == nil {
		return s, err
	}
	if !slugRE.MatchString(*s) {
		return nil, errs.Field("'slug' must be URL-safe.", *s, f.at(k)...)
	}
	return s, nil
}

// Decode parses and checks a create or update body: {header?: {name?,
// description?, slug?}, secret?: {kind, data}}. Members it does not know
// are ignored, as the compatible platform does. Every refusal is a 422
// naming the field, except malformed JSON (400) and a body over
// MaxBodyBytes (413). Whether the secret or its key may be absent is the
// use case's to say.
func Decode(raw []byte) (Input, error) {
	var in Input
	if len(raw) > MaxBodyBytes {
		return in, errs.New(errs.TooLarge, "secrets.body_too_large", fmt.Sprintf("A secret's body may hold at most %d bytes.", MaxBodyBytes))
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		if !json.Valid(raw) {
			return in, errs.WithDetail(errs.Invalid, "request.malformed_body", err.Error(), "malformed JSON body: "+err.Error())
		}
		return in, errs.Field("Input should be a valid dictionary", nil, "body")
	}
	b := field{m: top, loc: []any{"body"}}
	h, err := b.sub("header")
	if err != nil {
		return in, err
	}
	if h != nil {
		if in.Header, err = decodeHeader(*h); err != nil {
			return in, err
		}
	}
	sec, err := b.sub("secret")
	if err != nil {
		return in, err
	}
	if sec != nil {
		if in.Secret, err = decodeSecret(*sec); err != nil {
			return in, err
		}
	}
	return in, nil
}

func decodeHeader(h field) (*HeaderIn, error) {
	var out HeaderIn
	var err error
	if out.Name, err = h.str("name", MaxNameLen, false, false); err != nil {
		return nil, err
	}
	if out.Description, err = h.str("description", MaxDescriptionLen, false, false); err != nil {
		return nil, err
	}
	if out.Slug, err = h.slug("slug"); err != nil {
		return nil, err
	}
	return &out, nil
}

func decodeSecret(sec field) (*SecretIn, error) {
	kind, err := sec.str("kind", 64, false, true)
	if err != nil {
		return nil, err
	}
	if kind == nil {
		return nil, errs.Field("Field required", nil, sec.at("kind")...)
	}
	out := &SecretIn{Kind: Kind(*kind)}
	if out.Kind != KindProviderKey && out.Kind != KindCustomProvider {
		return nil, errs.Field("Input should be 'provider_key' or 'custom_provider'", *kind, sec.at("kind")...)
	}
	data, err := sec.sub("data")
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, errs.Field("Field required", nil, sec.at("data")...)
	}
	dk, err := data.str("kind", 64, false, true)
	if err != nil {
		return nil, err
	}
	if dk == nil {
		return nil, errs.Field("Field required", nil, data.at("kind")...)
	}
	known := ProviderKinds
	if out.Kind == KindCustomProvider {
		known = CustomKinds
	}
	if !known[*dk] {
		return nil, errs.Field("Unknown provider kind", *dk, data.at("kind")...)
	}
	out.Data.Kind = *dk
	prov, err := data.sub("provider")
	if err != nil {
		return nil, err
	}
	if prov == nil {
		prov = &field{loc: data.at("provider")}
	}
	if out.Key, err = prov.str("key", MaxKeyBytes, true, true); err != nil {
		return nil, err
	}
	if out.Key != nil && strings.TrimSpace(*out.Key) == "" {
		return nil, errs.Field("String should not be blank", nil, prov.at("key")...)
	}
	if out.Kind == KindProviderKey {
		return out, nil // the rest of a provider key's data is not ours to keep
	}
	if err := decodeCustom(out, data, prov); err != nil {
		return nil, err
	}
	return out, nil
}

func decodeCustom(out *SecretIn, data, prov *field) error {
	u, err := prov.str("url", MaxURLLen, false, true)
	if err != nil {
		return err
	}
	if u != nil && *u != "" {
		if err := checkURL(*u, prov.at("url")); err != nil {
			return err
		}
		out.Data.Provider.URL = *u
	} else if needsURL[out.Data.Kind] {
		return errs.Field("Field required", nil, prov.at("url")...)
	}
	v, err := prov.str("version", MaxVersionLen, false, true)
	if err != nil {
		return err
	}
	if v != nil {
		out.Data.Provider.Version = *v
	}
	ex, err := prov.sub("extras")
	if err != nil {
		return err
	}
	if ex != nil {
		if len(ex.m) > MaxExtras {
			return errs.Field(fmt.Sprintf("Dictionary should have at most %d items", MaxExtras), nil, ex.loc...)
		}
		out.Extras = make(map[string]string, len(ex.m))
		for k := range ex.m {
			if len(k) > MaxExtraNameLen || !headerKeyRE.MatchString(k) {
				return errs.Field("Extra names are sent as HTTP header names and must be tokens", nil, ex.at(k)...)
			}
			s, err := ex.str(k, MaxExtraValueBytes, true, true)
			if err != nil {
				return err
			}
			if s == nil {
				continue
			}
			out.Extras[k] = *s
		}
	}
	if ps, err := data.slug("provider_slug"); err != nil {
		return err
	} else if ps != nil {
		out.Data.ProviderSlug = *ps
	}
	models := data.m["models"]
	if isNull(models) {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(models, &list); err != nil {
		return errs.Field("Input should be a valid list", nil, data.at("models")...)
	}
	if len(list) > MaxModels {
		return errs.Field(fmt.Sprintf("List should have at most %d items", MaxModels), nil, data.at("models")...)
	}
	seen := make(map[string]bool, len(list))
	for i, raw := range list {
		m, err := object(raw, data.at("models", i))
		if err != nil {
			return err
		}
		if m == nil {
			return errs.Field("Input should be a valid dictionary", nil, data.at("models", i)...)
		}
		s, err := m.str("slug", MaxSlugLen, false, true)
		if err != nil {
			return err
		}
		if s == nil || *s == "" {
			return errs.Field("Field required", nil, m.at("slug")...)
		}
		if seen[*s] {
			return errs.Field("Duplicate model slug", *s, m.at("slug")...)
		}
		seen[*s] = true
		out.Data.Models = append(out.Data.Models, Model{Slug: *s})
	}
	return nil
}

// checkURL accepts an absolute http or https URL with a host and nothing
// secret in it: the URL is shown to anyone who can read the project, so
// credentials belong in the key or extras, not in user info or a query.
func checkURL(s string, loc []any) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errs.Field("Input should be a valid URL", nil, loc...)
	case u.Scheme != "http" && u.Scheme != "https":
		return errs.Field("URL scheme should be 'http' or 'https'", nil, loc...)
	case u.Host == "" || u.Hostname() == "":
		return errs.Field("URL should have a host", nil, loc...)
	case u.User != nil:
		return errs.Field("URL should not hold credentials; put them in key or extras", nil, loc...)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return errs.Field("URL should have no query or fragment; put credentials in key or extras", nil, loc...)
	}
	return nil
}

// slugFor picks a new secret's slug: the header's, else a custom
// provider's provider_slug, else a provider key's family, else the name
// made URL-safe, else the provider kind.
func slugFor(h *HeaderIn, s *SecretIn) string {
	switch {
	case h != nil && h.Slug != nil:
		return *h.Slug
	case s.Kind == KindCustomProvider && s.Data.ProviderSlug != "":
		return s.Data.ProviderSlug
	case s.Kind == KindProviderKey:
		return s.Data.Kind
	case h != nil && h.Name != nil:
		if sl := slugify(*h.Name); sl != "" {
			return sl
		}
	}
	return s.Data.Kind
}

// slugify lowercases name and turns every run of other characters than
// [a-z0-9_.] into one dash, without a leading or trailing one.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.'
		if !ok {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
		if b.Len() >= MaxSlugLen {
			break
		}
	}
	s := b.String()
	if len(s) > MaxSlugLen {
		s = s[:MaxSlugLen]
	}
	if s != "" && !slugRE.MatchString(s) { // a leading '.'
		s = "s" + s
		if len(s) > MaxSlugLen {
			s = s[:MaxSlugLen]
		}
	}
	return s
}
