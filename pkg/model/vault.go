package model

// VaultPath is the registry's internal route the runtime reads a project's
// decrypted provider secrets from. The gateway routes nothing under
// /internal, so only a service holding the internal token reaches it.
const VaultPath = "/internal/secrets"

// VaultSecrets is the answer of VaultPath: every provider key and custom
// provider of the caller's project, keys in the clear. It never leaves the
// internal network.
type VaultSecrets struct {
	ProviderKeys    []VaultProviderKey    `json:"provider_keys"`
	CustomProviders []VaultCustomProvider `json:"custom_providers"`
}

// VaultProviderKey is a stored key for a standard provider family.
type VaultProviderKey struct {
	Slug string `json:"slug"`
	Kind string `json:"kind"` // the provider family: openai, anthropic, ...
	Key  string `json:"key"`
}

// VaultCustomProvider is a stored OpenAI-compatible endpoint.
type VaultCustomProvider struct {
	Slug    string            `json:"slug"`
	Kind    string            `json:"kind"` // custom, azure, or a family at a custom URL
	URL     string            `json:"url,omitempty"`
	Version string            `json:"version,omitempty"`
	Key     string            `json:"key,omitempty"`
	Headers map[string]string `json:"headers,omitempty"` // the secret's extras, sent as HTTP headers
	Models  []string          `json:"models,omitempty"`
}
