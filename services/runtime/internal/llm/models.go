package llm

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/assayhq/assay/pkg/errs"
)

// suggested are the models a model picker offers for a family whose key is
// set, as llm_config.model names them (each resolves to its family without
// a prefix, or carries it). A family's other models are typed by hand: the
// list is a start, not the providers' catalogues, which change every month.
var suggested = map[string][]string{
	"openai":      {"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-4.1", "o3-mini"},
	"anthropic":   {"claude-3-5-haiku-latest", "claude-3-7-sonnet-latest", "claude-sonnet-4-0"},
	"gemini":      {"gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-pro"},
	"mistral":     {"mistral-small-latest", "mistral-large-latest"},
	"groq":        {"groq/llama-3.1-8b-instant", "groq/llama-3.3-70b-versatile"},
	"together_ai": {"together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo"},
	"openrouter":  {"openrouter/openai/gpt-4o-mini"},
	"deepinfra":   {"deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct"},
	"azure":       {}, // deployments are the project's own names: azure/<deployment>
}

// Provider is one provider a project's calls can reach now: a stored key,
// a custom provider, or a key the runtime's environment holds.
type Provider struct {
	// Name is what a model names it by: the family ("openai") or the custom
	// provider's slug.
	Name string `json:"name"`
	// Kind is the family, or "custom" for an OpenAI-compatible endpoint.
	Kind string `json:"kind"`
	// Source is "vault" (a secret of the project) or "environment" (the
	// runtime's <FAMILY>_API_KEY).
	Source string `json:"source"`
	// Slug is the secret's slug (vault only): what llm_config.connection
	// and a connection test name.
	Slug string `json:"slug,omitempty"`
	// Models are llm_config.model values that reach this provider: a custom
	// provider's as "<slug>/<model>", a family's suggested ones.
	Models []string `json:"models"`
}

// Providers lists what s and the environment configure, custom providers
// first (a project that added one means to use it), then the families with
// a key, in name order. A family's stored key and the environment's are
// one entry (the stored key shadows the other, as calls do).
func (c *Client) Providers(s Secrets) []Provider {
	var out []Provider
	for _, cp := range s.Custom {
		p := Provider{Name: cp.Slug, Kind: "custom", Source: "vault", Slug: cp.Slug, Models: []string{}}
		if fam, ok := family(cp.Kind); ok {
			p.Kind = fam
		}
		for _, m := range cp.Models {
			p.Models = append(p.Models, cp.Slug+"/"+m)
		}
		out = append(out, p)
	}
	var fams []Provider
	seen := map[string]bool{}
	for _, k := range s.Keys {
		fam, ok := family(k.Kind)
		if !ok || k.Key == "" || seen[fam] {
			continue
		}
		seen[fam] = true
		fams = append(fams, Provider{Name: fam, Kind: fam, Source: "vault", Slug: k.Slug, Models: append([]string{}, suggested[fam]...)})
	}
	for fam, p := range presets {
		if seen[fam] {
			continue
		}
		for _, name := range p.envKeys {
			if c.env(name) != "" {
				seen[fam] = true
				fams = append(fams, Provider{Name: fam, Kind: fam, Source: "environment", Models: append([]string{}, suggested[fam]...)})
				break
			}
		}
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].Name < fams[j].Name })
	return append(out, fams...)
}

// Check is the outcome of a connection test.
type Check struct {
	Provider string `json:"provider"`
	OK       bool   `json:"ok"`
	// Models is how many models the provider listed (OK only).
	Models int `json:"models,omitempty"`
	// Status is the provider's HTTP status of a failed test (0: no answer).
	Status int `json:"status,omitempty"`
	// Error is why the test failed, as a call would fail: the provider's
	// message for a family (scrubbed of the key), a summary for a custom
	// provider, the egress policy's refusal of its URL.
	Error     string `json:"error,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// Check makes one cheap request to the provider named (a secret's slug,
// or a family whose key is stored or in the environment): GET <base>/models,
// which costs no tokens, through the egress policy and with the key a call
// would send. A name that reaches no provider is errs.NotFound naming it.
// The key never appears in the answer.
func (c *Client) Check(ctx context.Context, s Secrets, name string) (Check, error) {
	if name == "" {
		return Check{}, errs.Field("is required", name, "provider")
	}
	t, err := resolver{secrets: s, env: c.env, baseURLs: c.cfg.BaseURLs}.checkTarget(name)
	if errs.KindOf(err) == errs.NotFound {
		return Check{}, err
	}
	out := Check{Provider: name}
	if err != nil {
		out.Error = errs.From(err).Msg
		return out, nil
	}
	if t.Family == "azure" {
		// Azure lists no models under a deployment's URL: only a call to a
		// deployment tests it.
		out.Error = "an Azure endpoint is tested by a call to one of its deployments: run azure/<deployment> in the playground"
		return out, nil
	}
	if err := c.checkTarget(t); err != nil {
		out.Error = errs.From(err).Msg
		return out, nil
	}
	start := time.Now()
	svc := openai.NewModelService(c.options(t)...)
	page, err := svc.List(ctx)
	out.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		ce := classify(err, t, secretOf(t))
		out.Status = ce.status
		out.Error = errs.From(ce.toErrs()).Msg
		return out, nil
	}
	out.OK = true
	out.Models = len(page.Data)
	return out, nil
}

// checkTarget is where a connection test of name goes: the custom provider
// of that slug, the stored key of that slug, or the family of that name
// with the key a call would use. A name that is none of these is
// errs.NotFound; a provider that cannot be called (no key, no URL) is the
// error a call would get.
func (r resolver) checkTarget(name string) (target, error) {
	if cp, ok := r.custom(name); ok {
		return r.customTarget(cp, "")
	}
	if pk, ok := r.keyBySlug(name); ok {
		fam, known := family(pk.Kind)
		if !known {
			return target{}, errs.Message(errs.FailedDependency, "runtime.llm_no_connection",
				fmt.Sprintf("secret %q is a key of unknown provider kind %q", name, pk.Kind), map[string]any{"provider": name})
		}
		return r.presetTarget(fam, "", pk.Key)
	}
	fam, known := family(name)
	if !known {
		return target{}, errs.Message(errs.NotFound, "runtime.llm_no_provider",
			fmt.Sprintf("provider %q: no secret has that slug and no provider family has that name", name), map[string]any{"provider": name})
	}
	key, err := r.key(fam)
	if err != nil {
		return target{}, err
	}
	return r.presetTarget(fam, "", key)
}
