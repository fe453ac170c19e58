// Package llm calls LLM providers through the official OpenAI Go client
// (github.com/openai/openai-go/v3) against any OpenAI-compatible base URL:
// presets for OpenAI, Azure OpenAI, Anthropic's and Gemini's
// OpenAI-compatible endpoints, Mistral, Groq, Together, OpenRouter,
// DeepInfra, and custom providers (base URL, headers, model list) for
// Ollama, vLLM and proxies. It retries with backoff, falls back to other
// configurations as the fallback policy allows, and maps a provider's
// refusal to an errs kind the invoke surface renders.
//
// This file is the contract between the invoke surface and the provider
// work; the bodies are filled in by the provider work.
package llm

import (
	"context"
	"time"

	"github.com/assayhq/assay/pkg/errs"
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

// Config is the provider layer's configuration (RUNTIME_LLM_*).
type Config struct {
	Timeout time.Duration `default:"60s" desc:"time-out of one provider call (each retry gets its own)"`
	// BaseURLs overrides a preset's base URL per family, for proxies and
	// tests: "openai=http://127.0.0.1:9999/v1,anthropic=...".
	BaseURLs map[string]string `split_words:"true" desc:"per-family base URL overrides, family=url pairs separated by commas"`
}

// Request is one chat-completions call and how to recover from a failure.
type Request struct {
	Config          prompt.LLMConfig
	Messages        []prompt.Message
	ResponseFormat  map[string]any // rendered; nil for text
	FallbackConfigs []prompt.LLMConfig
	FallbackPolicy  string // off (default), availability, capacity, access, context, any
	Retry           *prompt.RetryConfig
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
	Provider     string // family of the configuration that answered
	Usage        Usage
}

// Delta is one streamed piece of an answer.
type Delta struct {
	Content   string
	ToolCalls []any
}

// Client calls providers. Safe for concurrent use.
type Client struct{ cfg Config }

// New returns a client; env reads <FAMILY>_API_KEY fallbacks (os.Getenv in
// production, a map in tests).
func New(cfg Config, env func(string) string) *Client { return &Client{cfg: cfg} }

// Chat runs req. A provider's 401/403/429 (after retries and fallbacks) is
// errs.FailedDependency with the provider's message; no key for the model's
// family is errs.FailedDependency naming the family; a time-out is
// errs.Timeout; a bad request the provider refuses (400/404/422) is
// errs.Invalid with its message; other failures errs.Unavailable.
func (c *Client) Chat(ctx context.Context, s Secrets, req Request) (Response, error) {
	return Response{}, errs.New(errs.NotImplemented, "runtime.llm", "providers are not built yet")
}

// ChatStream is Chat with the answer streamed: onDelta gets each piece as it
// arrives; the returned Response holds the whole answer and its usage.
// Retries and fallbacks apply only before the first delta.
func (c *Client) ChatStream(ctx context.Context, s Secrets, req Request, onDelta func(Delta) error) (Response, error) {
	return Response{}, errs.New(errs.NotImplemented, "runtime.llm", "providers are not built yet")
}

// Embed returns one embedding per input from the embeddings endpoint of
// model's provider (connection picks a stored key or custom provider).
func (c *Client) Embed(ctx context.Context, s Secrets, model, connection string, input []string) ([][]float64, error) {
	return nil, errs.New(errs.NotImplemented, "runtime.llm", "providers are not built yet")
}
