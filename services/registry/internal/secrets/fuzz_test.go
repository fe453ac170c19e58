package secrets

import (
	"regexp"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
)

// decodeBound: decoding allocates a few times the body (bounded by
// MaxBodyBytes anyway).
var decodeBound = fuzzbound.Bound{PerByte: 64, Fixed: 1 << 20}

var slugOK = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)

// FuzzDecode checks that decoding a create or update body never panics,
// answers only the documented kinds, names the field of every 422, costs
// memory linear in the body, and that what it accepts stays within the
// limits and yields a valid slug.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"header":{"name":"OpenAI"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-1"}}}}`,
		`{"secret":{"kind":"custom_provider","data":{"kind":"custom","provider":{"url":"http://127.0.0.1:11434/v1","extras":{"X-A":"b"}},"models":[{"slug":"llama3"}],"provider_slug":"ollama"}}}`,
		`{"secret":{"kind":"custom_provider","data":{"kind":"azure","provider":{"url":"https://u:p@h?x=1","version":"v"}}}}`,
		`{"header":{"name":"\u0000","slug":"../x"}}`,
		`{"header":{"name":"Ünïcode — name"},"secret":{"kind":"custom_provider","data":{"kind":"vertex_ai","provider":{}}}}`,
		`{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"a\r\nb"}}}}`,
		`{"secret":{"kind":"custom_provider","data":{"kind":"custom","provider":{"url":"http://h"},"models":[{"slug":"a"},{"slug":"a"}]}}}`,
		`[]`, `null`, `{"secret":`, ``, `{"secret":{"kind":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeBound.Check(t, len(body), func() { _, _ = Decode(body) })
		in, err := Decode(body)
		if err != nil {
			e := errs.From(err)
			switch e.Kind {
			case errs.Invalid, errs.TooLarge:
			case errs.Unprocessable:
				if fe, ok := e.Detail.([]errs.FieldError); !ok || len(fe) != 1 || len(fe[0].Loc) == 0 || fe[0].Loc[0] != "body" {
					t.Fatalf("422 without a field: %#v", e.Detail)
				}
			default:
				t.Fatalf("unexpected kind %v: %v", e.Kind, err)
			}
			return
		}
		if in.Secret == nil {
			return
		}
		s := in.Secret
		if s.Kind != KindProviderKey && s.Kind != KindCustomProvider {
			t.Fatalf("accepted kind %q", s.Kind)
		}
		if s.Key != nil && len(*s.Key) > MaxKeyBytes || len(s.Data.Provider.URL) > MaxURLLen*4 || len(s.Extras) > MaxExtras || len(s.Data.Models) > MaxModels {
			t.Fatalf("accepted over a limit: %+v", s)
		}
		if slug := slugFor(in.Header, s); !slugOK.MatchString(slug) || len(slug) > MaxSlugLen {
			t.Fatalf("slug %q for %s", slug, body)
		}
	})
}
