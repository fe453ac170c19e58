package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
)

func custom(provider string, extra ...string) string {
	more := ""
	if len(extra) > 0 {
		more = "," + extra[0]
	}
	return `{"secret":{"kind":"custom_provider","data":{"kind":"custom","provider":` + provider + more + `}}}`
}

// TestDecodeRefusals: every refusal names its field.
func TestDecodeRefusals(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, body string
		kind       errs.Kind
		loc        string // JSON of the 422's loc
	}{
		{"not an object", `[1]`, errs.Unprocessable, `["body"]`},
		{"malformed", `{"secret":`, errs.Invalid, ``},
		{"unknown secret kind", `{"secret":{"kind":"password","data":{}}}`, errs.Unprocessable, `["body","secret","kind"]`},
		{"secret kind missing", `{"secret":{"data":{}}}`, errs.Unprocessable, `["body","secret","kind"]`},
		{"data missing", `{"secret":{"kind":"provider_key"}}`, errs.Unprocessable, `["body","secret","data"]`},
		{"unknown provider", `{"secret":{"kind":"provider_key","data":{"kind":"acme","provider":{"key":"k"}}}}`, errs.Unprocessable, `["body","secret","data","kind"]`},
		{"custom kind as provider key", `{"secret":{"kind":"provider_key","data":{"kind":"custom","provider":{"key":"k"}}}}`, errs.Unprocessable, `["body","secret","data","kind"]`},
		{"blank key", `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"  "}}}}`, errs.Unprocessable, `["body","secret","data","provider","key"]`},
		{"key not a string", `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":1}}}}`, errs.Unprocessable, `["body","secret","data","provider","key"]`},
		{"key with a newline", `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"a\nb"}}}}`, errs.Unprocessable, `["body","secret","data","provider","key"]`},
		{"key too long", `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"` + long(MaxKeyBytes+1) + `"}}}}`, errs.Unprocessable, `["body","secret","data","provider","key"]`},
		{"name too long", `{"header":{"name":"` + long(MaxNameLen+1) + `"}}`, errs.Unprocessable, `["body","header","name"]`},
		{"description NUL", `{"header":{"description":"a\u0000b"}}`, errs.Unprocessable, `["body","header","description"]`},
		{"bad slug", `{"header":{"slug":"a b"}}`, errs.Unprocessable, `["body","header","slug"]`},
		{"header not an object", `{"header":"x"}`, errs.Unprocessable, `["body","header"]`},
		{"custom without url", custom(`{"key":"k"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url scheme", custom(`{"url":"ftp://h/v1"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url relative", custom(`{"url":"/v1"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url with credentials", custom(`{"url":"https://u:p@h/v1"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url with a query", custom(`{"url":"https://h/v1?api-key=x"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url too long", custom(`{"url":"https://h/` + long(MaxURLLen) + `"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"url not parseable", custom(`{"url":"http://[::1"}`), errs.Unprocessable, `["body","secret","data","provider","url"]`},
		{"extra name", custom(`{"url":"http://h","extras":{"Bad Header":"v"}}`), errs.Unprocessable, `["body","secret","data","provider","extras","Bad Header"]`},
		{"extra value", custom(`{"url":"http://h","extras":{"X-A":"v\r\nX-B: w"}}`), errs.Unprocessable, `["body","secret","data","provider","extras","X-A"]`},
		{"extra not a string", custom(`{"url":"http://h","extras":{"X-A":{}}}`), errs.Unprocessable, `["body","secret","data","provider","extras","X-A"]`},
		{"models not a list", custom(`{"url":"http://h"}`, `"models":{}`), errs.Unprocessable, `["body","secret","data","models"]`},
		{"model without slug", custom(`{"url":"http://h"}`, `"models":[{}]`), errs.Unprocessable, `["body","secret","data","models",0,"slug"]`},
		{"duplicate model", custom(`{"url":"http://h"}`, `"models":[{"slug":"a"},{"slug":"a"}]`), errs.Unprocessable, `["body","secret","data","models",1,"slug"]`},
		{"bad provider slug", custom(`{"url":"http://h"}`, `"provider_slug":"a/b"`), errs.Unprocessable, `["body","secret","data","provider_slug"]`},
		{"body too large", `{"header":{"description":"` + long(MaxBodyBytes) + `"}}`, errs.TooLarge, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.body))
			require.Error(t, err)
			assert.Equal(t, tc.kind, errs.KindOf(err), err.Error())
			if tc.loc == "" {
				return
			}
			fe, ok := errs.From(err).Detail.([]errs.FieldError)
			require.True(t, ok, "%v", err)
			got, _ := json.Marshal(fe[0].Loc)
			assert.JSONEq(t, tc.loc, string(got))
			assert.NotContains(t, string(got)+fe[0].Msg, long(100), "an over-long value is not echoed")
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	in, err := Decode([]byte(`{"header":{"name":"N","description":"line one\nline two"},"secret":{"kind":"custom_provider","data":{"kind":"azure",
		"provider":{"url":"https://x.openai.azure.com/openai","version":"2024-06-01","key":"k","extras":{"api-key":"v","X-Null":null}},
		"models":[{"slug":"gpt-4o","extras":{"ignored":true}}],"model_keys":["x"]}},"unknown":1}`))
	require.NoError(t, err)
	assert.Equal(t, "line one\nline two", *in.Header.Description)
	assert.Equal(t, "azure", in.Secret.Data.Kind)
	assert.Equal(t, "2024-06-01", in.Secret.Data.Provider.Version)
	assert.Equal(t, map[string]string{"api-key": "v"}, in.Secret.Extras)
	assert.Equal(t, []Model{{Slug: "gpt-4o"}}, in.Secret.Data.Models)

	in, err = Decode(nil)
	require.NoError(t, err)
	assert.Nil(t, in.Header)
	assert.Nil(t, in.Secret)

	// A provider key keeps nothing but its family and key.
	in, err = Decode([]byte(`{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"k","url":"http://x"},"models":[{"slug":"m"}]}}}`))
	require.NoError(t, err)
	assert.Equal(t, Data{Kind: "openai"}, in.Secret.Data)
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"My Ollama":       "my-ollama",
		"  Team vLLM #2 ": "team-vllm-2",
		"émoji 😀 only":    "moji-only",
		"...":             "s...",
		"":                "",
		"---":             "",
	} {
		assert.Equal(t, want, slugify(in), in)
	}
	assert.Len(t, slugify(strings.Repeat("a", 1000)), MaxSlugLen)
}
