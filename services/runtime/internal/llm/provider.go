package llm

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

// DefaultModel is the model of an llm_config that names none (the
// compatible platform's default).
const DefaultModel = "gpt-4o-mini"

// DefaultAzureAPIVersion is the api-version sent to Azure when the custom
// provider (or AZURE_API_VERSION) names none.
const DefaultAzureAPIVersion = "2024-10-21"

// preset is a provider family reached at a known OpenAI-compatible URL.
type preset struct {
	baseURL string
	envKeys []string // <FAMILY>_API_KEY names, first set wins
}

// presets are the families the runtime knows; azure has no fixed URL.
var presets = map[string]preset{
	"openai":      {"https://api.openai.com/v1", []string{"OPENAI_API_KEY"}},
	"anthropic":   {"https://api.anthropic.com/v1/", []string{"ANTHROPIC_API_KEY"}},
	"gemini":      {"https://generativelanguage.googleapis.com/v1beta/openai/", []string{"GEMINI_API_KEY"}},
	"mistral":     {"https://api.mistral.ai/v1", []string{"MISTRAL_API_KEY"}},
	"groq":        {"https://api.groq.com/openai/v1", []string{"GROQ_API_KEY"}},
	"together_ai": {"https://api.together.xyz/v1", []string{"TOGETHERAI_API_KEY", "TOGETHER_API_KEY"}},
	"openrouter":  {"https://openrouter.ai/api/v1", []string{"OPENROUTER_API_KEY"}},
	"deepinfra":   {"https://api.deepinfra.com/v1/openai", []string{"DEEPINFRA_API_KEY"}},
	"azure":       {"", []string{"AZURE_API_KEY"}},
}

// aliases maps other spellings of a family (in a model prefix or a secret's
// kind) to the family.
var aliases = map[string]string{
	"together": "together_ai", "togetherai": "together_ai", "google": "gemini",
	"azure_openai": "azure", "azure_ai": "azure", "open_router": "openrouter",
}

func family(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[name]; ok {
		name = a
	}
	_, ok := presets[name]
	return name, ok
}

// familyOfModel guesses the family of an unprefixed model name.
func familyOfModel(model string) (string, bool) {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"),
		strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "text-embedding-"), strings.HasPrefix(m, "chatgpt-"):
		return "openai", true
	case strings.HasPrefix(m, "claude-"):
		return "anthropic", true
	case strings.HasPrefix(m, "gemini-"):
		return "gemini", true
	case strings.HasPrefix(m, "mistral-"), strings.HasPrefix(m, "codestral-"), strings.HasPrefix(m, "ministral-"):
		return "mistral", true
	}
	return "", false
}

// reasoningModel reports OpenAI's o-series, which take max_completion_tokens
// and refuse max_tokens.
func reasoningModel(fam, model string) bool {
	if fam != "openai" && fam != "azure" {
		return false
	}
	m := strings.ToLower(model)
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// target is where one configuration's calls go, fully resolved.
type target struct {
	Family  string // preset family, or "custom"
	Label   string // what error messages name: the family or the custom provider's slug
	BaseURL string
	Key     string // bearer key; empty: no Authorization header
	Headers map[string]string
	Query   map[string]string
	Model   string // as sent: without the family or slug prefix
	Custom  bool   // BaseURL is a custom provider's, which its project chose
}

// resolver turns (model, connection) into a target from the vault's secrets,
// the environment and the base-URL overrides.
type resolver struct {
	secrets  Secrets
	env      func(string) string
	baseURLs map[string]string
}

// resolve picks the provider of model. connection, when set, names a custom
// provider or a stored provider key (its slug) and wins over the guess from
// the model's name. A model the resolver cannot place is errs.Invalid; a
// family without a key, or a connection naming no secret, is
// errs.FailedDependency saying how to add one.
func (r resolver) resolve(model, connection string) (target, error) {
	model = strings.TrimSpace(model)
	if model == "" {
		model = DefaultModel
	}
	connection = strings.TrimSpace(connection)
	prefix, rest, hasPrefix := strings.Cut(model, "/")

	if connection != "" {
		if cp, ok := r.custom(connection); ok {
			if hasPrefix && prefix == cp.Slug {
				model = rest
			}
			return r.customTarget(cp, model)
		}
		pk, ok := r.keyBySlug(connection)
		if !ok {
			return target{}, errs.Message(errs.FailedDependency, "runtime.llm_no_connection",
				fmt.Sprintf("llm_config.connection %q names no provider key or custom provider in the project's vault; add a secret with that slug", connection),
				map[string]any{"connection": connection})
		}
		fam, known := family(pk.Kind)
		if !known {
			return target{}, errs.Message(errs.FailedDependency, "runtime.llm_no_connection",
				fmt.Sprintf("llm_config.connection %q is a key of unknown provider kind %q", connection, pk.Kind),
				map[string]any{"connection": connection})
		}
		mfam, sent, placed := r.place(model)
		if placed && mfam != fam {
			return target{}, errs.Message(errs.Invalid, "runtime.llm_connection_mismatch",
				fmt.Sprintf("llm_config.connection %q is a %s key but model %q is a %s model", connection, fam, model, mfam),
				map[string]any{"connection": connection, "model": model})
		}
		if !placed {
			sent = model
		}
		return r.presetTarget(fam, sent, pk.Key)
	}

	if hasPrefix {
		if cp, ok := r.custom(prefix); ok {
			return r.customTarget(cp, rest)
		}
	}
	fam, sent, placed := r.place(model)
	if !placed {
		for _, cp := range r.secrets.Custom {
			for _, m := range cp.Models {
				if m == model {
					return r.customTarget(cp, model)
				}
			}
		}
		return target{}, errs.Message(errs.Invalid, "runtime.llm_unknown_model",
			fmt.Sprintf("llm_config.model %q: unknown provider; prefix the model with its provider (openai/, anthropic/, gemini/, mistral/, groq/, together_ai/, openrouter/, deepinfra/, azure/) or a custom provider's slug", model),
			map[string]any{"model": model})
	}
	key, err := r.key(fam)
	if err != nil {
		return target{}, err
	}
	return r.presetTarget(fam, sent, key)
}

// place finds the family of model from its prefix or its name, and the
// model name sent to the provider.
func (r resolver) place(model string) (fam, sent string, ok bool) {
	if prefix, rest, has := strings.Cut(model, "/"); has && rest != "" {
		if f, known := family(prefix); known {
			return f, rest, true
		}
	}
	if f, known := familyOfModel(model); known {
		return f, model, true
	}
	return "", "", false
}

func (r resolver) custom(slug string) (CustomProvider, bool) {
	for _, cp := range r.secrets.Custom {
		if cp.Slug == slug {
			return cp, true
		}
	}
	return CustomProvider{}, false
}

func (r resolver) keyBySlug(slug string) (ProviderKey, bool) {
	for _, k := range r.secrets.Keys {
		if k.Slug == slug {
			return k, true
		}
	}
	return ProviderKey{}, false
}

// key returns the family's key: the first stored key of that kind (a stored
// key shadows the environment's), else <FAMILY>_API_KEY.
func (r resolver) key(fam string) (string, error) {
	for _, k := range r.secrets.Keys {
		if f, _ := family(k.Kind); f == fam && k.Key != "" {
			return k.Key, nil
		}
	}
	if r.env != nil {
		for _, name := range presets[fam].envKeys {
			if v := strings.TrimSpace(r.env(name)); v != "" {
				return v, nil
			}
		}
	}
	msg := fmt.Sprintf("no API key for provider %q: add a provider key of kind %q to the project's vault (console: Settings, Provider secrets), or set %s on the runtime",
		fam, fam, strings.Join(presets[fam].envKeys, " or "))
	// A project that added its own endpoint most likely meant to use it:
	// say how its models are named, the step the message is usually missing.
	var models []string
	for _, cp := range r.secrets.Custom {
		for _, m := range cp.Models {
			models = append(models, cp.Slug+"/"+m)
		}
		if len(cp.Models) == 0 {
			models = append(models, cp.Slug+"/<model>")
		}
	}
	if len(models) > 0 {
		if len(models) > 5 {
			models = append(models[:5], "…")
		}
		msg += "; or choose a model of the project's custom providers, named <provider slug>/<model>: " + strings.Join(models, ", ")
	}
	return "", errs.Message(errs.FailedDependency, "runtime.llm_no_key", msg, map[string]any{"provider": fam})
}

func (r resolver) presetTarget(fam, model, key string) (target, error) {
	if fam == "azure" {
		return r.azureTarget(fam, r.baseURLs["azure"], r.env0("AZURE_API_VERSION"), key, nil, model)
	}
	base := presets[fam].baseURL
	if o := r.baseURLs[fam]; o != "" {
		base = o
	}
	return target{Family: fam, Label: fam, BaseURL: base, Key: key, Model: model}, nil
}

func (r resolver) env0(name string) string {
	if r.env == nil {
		return ""
	}
	return strings.TrimSpace(r.env(name))
}

// customTarget is a custom provider's endpoint. Kind azure takes Azure's
// shape. Its key is its own or none: a custom provider of a family kind
// without a key does not borrow the family's stored or environment key,
// which was given for the family's own endpoint, not for a URL any editor
// can set (kind custom without a key is how Ollama and vLLM are reached).
func (r resolver) customTarget(cp CustomProvider, model string) (target, error) {
	fam, known := family(cp.Kind)
	if known && fam == "azure" {
		t, err := r.azureTarget(cp.Slug, cp.URL, cp.Version, cp.Key, cp.Headers, model)
		t.Custom = true
		return t, err
	}
	if cp.URL == "" {
		return target{}, errs.Message(errs.FailedDependency, "runtime.llm_custom_provider",
			fmt.Sprintf("custom provider %q has no URL; set one in the project's vault", cp.Slug),
			map[string]any{"provider": cp.Slug})
	}
	if _, err := url.Parse(cp.URL); err != nil {
		return target{}, errs.Message(errs.FailedDependency, "runtime.llm_custom_provider",
			fmt.Sprintf("custom provider %q has an invalid URL", cp.Slug), map[string]any{"provider": cp.Slug})
	}
	f := "custom"
	if known {
		f = fam
	}
	return target{Family: f, Label: cp.Slug, BaseURL: cp.URL, Key: cp.Key, Headers: cp.Headers, Model: model, Custom: true}, nil
}

// azureTarget is Azure OpenAI's shape: the deployment (the model) in the
// path, the api-version query, the key in an api-key header.
func (r resolver) azureTarget(label, endpoint, version, key string, headers map[string]string, model string) (target, error) {
	if endpoint == "" {
		endpoint = r.env0("AZURE_API_BASE")
	}
	if endpoint == "" {
		return target{}, errs.Message(errs.FailedDependency, "runtime.llm_custom_provider",
			"Azure OpenAI needs an endpoint: add a custom provider of kind azure (URL and API version) to the project's vault, or set AZURE_API_BASE on the runtime",
			map[string]any{"provider": "azure"})
	}
	if version == "" {
		version = DefaultAzureAPIVersion
	}
	h := map[string]string{}
	if key != "" {
		h["api-key"] = key
	}
	for k, v := range headers {
		h[k] = v
	}
	base := strings.TrimSuffix(endpoint, "/") + "/openai/deployments/" + url.PathEscape(model)
	return target{Family: "azure", Label: label, BaseURL: base, Headers: h,
		Query: map[string]string{"api-version": version}, Model: model}, nil
}
