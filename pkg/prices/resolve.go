package prices

import "strings"

// Span is what a stored span says about a model call.
type Span struct {
	Provider string // gen_ai.provider.name, gen_ai.system or the like
	BaseURL  string // the API base URL the client called
	Model    string
}

type resolution struct {
	p *Provider
	m *Model
}

// maxResolved bounds the cache of Resolve: model and provider strings come
// from clients, so their number is not ours to trust.
const maxResolved = 8192

// Resolve finds the provider and model a span's call is priced by, nil
// when none fits. It is Calc's lookup, made lenient for what tracing
// clients send: a provider string that names no provider of the data (an
// SDK's own label, such as "langchain") is skipped, and the call is
// looked up by base URL and then by model id instead; a provider that has
// no such model gives way to the provider the model id names (an
// OpenAI-compatible client calling a proxy reports "openai" for a Claude
// model); a model id with a provider prefix ("openai/gpt-4o") that finds
// nothing is looked up again as that provider's model, as the compatible platform
// does for litellm; and a model no provider could be found for is taken by
// its exact id from any provider's list (text-embedding-3-small, which
// OpenAI's model_match does not cover), the model makers' lists first. Answers are
// cached, so that pricing on the ingest path costs one map read.
func (t *Table) Resolve(s Span) (*Provider, *Model) {
	t.mu.RLock()
	r, ok := t.resolved[s]
	t.mu.RUnlock()
	if ok {
		return r.p, r.m
	}
	p, m := t.resolve(s)
	t.mu.Lock()
	if t.resolved == nil {
		t.resolved = map[Span]resolution{}
	}
	if len(t.resolved) < maxResolved {
		t.resolved[s] = resolution{p, m}
	}
	t.mu.Unlock()
	return p, m
}

func (t *Table) resolve(s Span) (*Provider, *Model) {
	model := strings.TrimSpace(strings.ToLower(s.Model))
	if model == "" {
		return nil, nil
	}
	var p *Provider
	if s.Provider != "" && !strings.EqualFold(s.Provider, "litellm") {
		p = t.providerByName(s.Provider)
	}
	if p == nil && s.BaseURL != "" {
		p = t.providerByURL(s.BaseURL)
	}
	named := p != nil // by the span's provider string or base URL
	if p == nil {
		p = t.providerByModel(model)
	}
	if p != nil {
		if m := p.FindModel(model); m != nil {
			return p, m
		}
		// An OpenAI-compatible client reports "openai" for whatever model
		// the proxy behind its base URL serves (claude-… through LiteLLM):
		// the provider that the model id names prices it.
		if mp := t.providerByModel(model); mp != nil && mp != p {
			if m := mp.FindModel(model); m != nil {
				return mp, m
			}
		}
	}
	if i := strings.IndexByte(model, '/'); i > 0 && i < len(model)-1 {
		if pp := t.providerByName(model[:i]); pp != nil {
			if m := pp.FindModel(model[i+1:]); m != nil {
				return pp, m
			}
		}
	}
	if !named { // the span named no provider the data knows
		if r, ok := t.byModelID[model]; ok {
			return r.p, r.m
		}
	}
	return nil, nil
}
