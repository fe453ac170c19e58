// Package vaultwire is the wire contract of the registry's internal secrets
// route: the path the runtime calls and the JSON document the registry answers
// with. It crosses a process boundary but has nothing to do with spans, so it
// lives apart from pkg/spanstream.
package vaultwire

// Path is the registry's internal route the runtime reads a project's
// decrypted provider secrets from. The gateway routes nothing under
// /internal, so only a service holding the internal token reaches it.
const Path = "/internal/secrets"

// Secrets is the answer of Path: every provider key and custom
// provider of the caller's project, keys in the clear. It never leaves the
// internal network.
type Secrets struct {
	ProviderKeys    []ProviderKey    `json:"provider_keys"`
	CustomProviders []CustomProvider `json:"custom_providers"`
}

// ProviderKey is a stored key for a standard provider family.
type ProviderKey struct {
	Slug string `json:"slug"`
	Kind string `json:"kind"` // the provider family: openai, anthropic, ...
	Key  string `json:"key"`
}

// CustomProvider is a stored OpenAI-compatible endpoint.
type CustomProvider struct {
	Slug    string            `json:"slug"`
	Kind    string            `json:"kind"` // custom, azure, or a family at a custom URL
	URL     string            `json:"url,omitempty"`
	Version string            `json:"version,omitempty"`
	Key     string            `json:"key,omitempty"`
	Headers map[string]string `json:"headers,omitempty"` // the secret's extras, sent as HTTP headers
	Models  []string          `json:"models,omitempty"`
}
