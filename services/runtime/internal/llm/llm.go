// Package llm calls LLM providers through the official OpenAI Go client
// (github.com/openai/openai-go/v3) against any OpenAI-compatible base URL:
// presets for OpenAI, Azure OpenAI, Anthropic's and Gemini's
// OpenAI-compatible endpoints, Mistral, Groq, Together, OpenRouter,
// DeepInfra, and custom providers (base URL, headers, model list) for
// Ollama, vLLM and proxies. It retries with backoff, falls back to other
// configurations as the fallback policy allows, and maps a provider's
// refusal to an errs kind the invoke surface renders.
//
// Which provider a configuration reaches (provider.go): the model's
// "<family>/" or custom "<slug>/" prefix, else its name (gpt-*, o1*, o3*,
// o4*, text-embedding-* are OpenAI's, claude-* Anthropic's, gemini-*
// Gemini's), or llm_config.connection naming a stored key or custom
// provider. Keys: the vault's key of the family shadows <FAMILY>_API_KEY;
// a custom provider sends its own key or none, never another secret's.
//
// Every call goes through the runtime's egress policy (package egress):
// a custom base URL inside the network is refused as the caller's 422
// naming it, before any connection and again at dial time, after DNS and
// on every redirect. What a custom provider answers in an error is
// summarised (its status and a class), never echoed: its text would tell
// the caller what listens where.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/egress"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// ProviderKey is one stored provider key (a vault secret of kind
// provider_key): Kind is the provider family ("openai", "anthropic",
// "gemini", "mistral", "groq", "together_ai", "openrouter", "deepinfra",
// "azure", ...), Slug the secret's slug, which llm_config.connection names.
type ProviderKey struct {
	Slug string
	Kind string
	Key  string
}

// CustomProvider is a vault secret of kind custom_provider: an
// OpenAI-compatible endpoint of the project's own. Its models are called as
// "<slug>/<model>" (or with connection = slug).
type CustomProvider struct {
	Slug    string
	Kind    string // "custom", or a family ("azure", "openai", ...) at a custom URL
	URL     string // base URL, e.g. http://127.0.0.1:11434/v1
	Version string // API version (Azure)
	Key     string
	Headers map[string]string
	Models  []string
}

// Secrets is what a project's vault holds for the providers, decrypted.
// The zero value has none: keys then come from the environment only.
type Secrets struct {
	Keys   []ProviderKey
	Custom []CustomProvider
}

// DefaultTimeout bounds one provider call when Config.Timeout is not set.
const DefaultTimeout = 60 * time.Second

// Config is the provider layer's configuration (RUNTIME_LLM_*).
type Config struct {
	Timeout time.Duration `default:"60s" desc:"time-out of one provider call (each retry gets its own)"`
	// BaseURLs overrides a preset's base URL per family, for proxies and
	// tests: "openai=http://127.0.0.1:9999/v1,anthropic=...".
	BaseURLs URLMap `envconfig:"BASE_URLS" desc:"per-family base URL overrides, family=url pairs separated by commas"`
	// Concurrency is where each provider key's adaptive concurrency starts
	// and the most it grows back to (limiter.go).
	Concurrency int `default:"64" desc:"most evaluation cells' model calls in flight per provider key (an endpoint and its key; direct invocations are not limited): a key starts at 4 and gains a slot per success up to this until its first 429; a 429 halves it and pauses new calls for the provider's Retry-After, and successes grow it back by about half a slot per window of calls"`
	// CacheTTL and RateLimitWait are read by the runtime's main for the
	// evaluation cells' calls (invoke.Service).
	CacheTTL      time.Duration `envconfig:"CACHE_TTL" default:"168h" desc:"how long an evaluation cell's model answer is served from the project's model-call cache to an identical call (same provider, model, parameters, messages, tools, response format and repeat index); a run or application opts out with data.model_cache=false"`
	RateLimitWait time.Duration `envconfig:"RATE_LIMIT_WAIT" default:"10m" desc:"how long an evaluation cell's model call queues behind a provider's 429 (honouring its Retry-After) before the cell fails; direct invocations answer the 429 at once"`
}

// Request is one chat-completions call and how to recover from a failure.
type Request struct {
	Config          prompt.LLMConfig
	Messages        []prompt.Message
	ResponseFormat  map[string]any // rendered; nil for text
	FallbackConfigs []prompt.LLMConfig
	FallbackPolicy  string // off (default), availability, capacity, access, context, any
	Retry           *prompt.RetryConfig
	// RateLimitWait, when positive, makes a 429 queue the call instead of
	// failing it: it waits for the provider (its Retry-After, and a slot of
	// the provider key's concurrency) and tries again, for up to this long
	// in all, without spending retry_config's retries. Evaluation cells set
	// it; a direct invocation answers the 429 (or its fallback) at once.
	RateLimitWait time.Duration
	// OnWait, when set, hears that the call waits on provider's rate limit
	// until about until.
	OnWait func(provider string, until time.Time)
}

// Usage counts tokens; Cost is in USD, 0 when the model's price is unknown.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	Cost             float64
}

// Response is the assistant's answer.
type Response struct {
	Message      prompt.Message // role "assistant", content (string), tool_calls
	Refusal      string
	FinishReason string
	Model        string // the model the provider says answered
	Provider     string // family of the configuration that answered ("custom" for a custom provider of kind custom)
	Usage        Usage
}

// Delta is one streamed piece of an answer.
type Delta struct {
	Content   string
	ToolCalls []any
}

// Client calls providers. Safe for concurrent use.
type Client struct {
	cfg    Config
	env    func(string) string
	out    *egress.Client
	http   *http.Client
	limits *limiters
}

// New returns a client; env reads <FAMILY>_API_KEY fallbacks (os.Getenv in
// production, a map in tests); out is the runtime's egress policy, through
// which every provider call goes (nil: the policy with no exception, so a
// client built without one reaches public https addresses only).
func New(cfg Config, env func(string) string, out *egress.Client) *Client {
	if env == nil {
		env = func(string) string { return "" }
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout // a zero Config must not wait forever
	}
	if out == nil {
		out = egress.New(egress.Config{Timeout: cfg.Timeout})
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	// One transport for every provider keeps connections alive across calls.
	return &Client{cfg: cfg, env: env, out: out, http: out.HTTPClient(), limits: &limiters{max: cfg.Concurrency}}
}

// CheckBaseURLs checks the operator's base-URL overrides against the
// egress policy, for the runtime to refuse to start with one that every
// call would be refused (RUNTIME_EGRESS_ALLOW must admit a private one).
// Only what needs no lookup is checked.
func (c *Client) CheckBaseURLs() error {
	for fam, u := range c.cfg.BaseURLs {
		if err := c.out.Check(u); err != nil {
			return fmt.Errorf("RUNTIME_LLM_BASE_URLS %s: %s; admit it in RUNTIME_EGRESS_ALLOW", fam, errs.From(err).Msg)
		}
	}
	return nil
}

// Chat runs req. A provider's 401/403/429 (after retries and fallbacks) is
// errs.FailedDependency with the provider's message; no key for the model's
// family is errs.FailedDependency naming the family; a time-out is
// errs.Timeout; a bad request the provider refuses (400/404/422) is
// errs.Invalid with its message; other failures errs.Unavailable.
func (c *Client) Chat(ctx context.Context, s Secrets, req Request) (Response, error) {
	return c.run(ctx, s, req, c.chatOnce)
}

// ChatStream is Chat with the answer streamed: onDelta gets each piece as it
// arrives; the returned Response holds the whole answer and its usage.
// Retries and fallbacks apply only before the first delta. An error onDelta
// returns ends the call and is returned as is.
func (c *Client) ChatStream(ctx context.Context, s Secrets, req Request, onDelta func(Delta) error) (Response, error) {
	resp, err := c.run(ctx, s, req, c.streamOnce(onDelta))
	var de errDelta
	if errors.As(err, &de) {
		return Response{}, de.err
	}
	return resp, err
}

// Embed returns one embedding per input from the embeddings endpoint of
// model's provider (connection picks a stored key or custom provider).
// Failures are rendered as Chat's; a 429 or 5xx is retried once.
func (c *Client) Embed(ctx context.Context, s Secrets, model, connection string, input []string) ([][]float64, error) {
	if len(input) == 0 {
		return nil, nil
	}
	if len(input) > maxEmbedInputs {
		return nil, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("embeddings: at most %d inputs", maxEmbedInputs))
	}
	t, err := resolver{secrets: s, env: c.env, baseURLs: c.cfg.BaseURLs}.resolve(model, connection)
	if err != nil {
		return nil, err
	}
	if err := c.checkTarget(t); err != nil {
		return nil, err
	}
	svc := openai.NewEmbeddingService(c.options(t)...)
	p := openai.EmbeddingNewParams{
		Model:          t.Model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: input},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	b := backoff{retries: 1, next: 200 * time.Millisecond, budget: time.Second}
	for {
		res, err := svc.New(ctx, p)
		if err == nil {
			out := make([][]float64, len(input))
			for _, d := range res.Data {
				if d.Index >= 0 && int(d.Index) < len(out) {
					out[d.Index] = d.Embedding
				}
			}
			for i, v := range out {
				if v == nil {
					return nil, errs.New(errs.Unavailable, "runtime.llm_unavailable", fmt.Sprintf("%s: no embedding for input %d", t.Label, i))
				}
			}
			return out, nil
		}
		ce := classify(err, t, secretOf(t))
		if ce.refused != nil || !ce.retryable() || ctx.Err() != nil || !b.wait(ctx) {
			return nil, ce.toErrs()
		}
	}
}
