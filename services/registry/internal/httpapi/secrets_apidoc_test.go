package httpapi

import (
	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// The vault's bodies are decoded by secrets.Decode, field by field; these
// types document what it reads.
type (
	docSecretBody struct {
		Header *docSecretHeaderIn `json:"header,omitempty"`
		Secret *docSecretIn       `json:"secret,omitempty" doc:"Required on create; on edit, absent keeps the stored data."`
	}
	docSecretHeaderIn struct {
		Name        string `json:"name,omitempty"`
		Description string `json:"description,omitempty"`
		Slug        string `json:"slug,omitempty" doc:"Default: provider_slug, else the provider kind of a provider key, else the name made URL-safe."`
	}
	docSecretIn struct {
		Kind string          `json:"kind" doc:"provider_key or custom_provider." example:"provider_key"`
		Data docSecretDataIn `json:"data"`
	}
	docSecretDataIn struct {
		Kind         string              `json:"kind" doc:"provider_key: openai, anthropic, gemini, mistral, groq, together_ai, openrouter, deepinfra, cohere, ...; custom_provider: custom, azure, bedrock, vertex_ai, or a provider family at a URL of your own." example:"openai"`
		Provider     docSecretProviderIn `json:"provider"`
		Models       []wire.SecretModel  `json:"models,omitempty" doc:"custom_provider: the models it serves."`
		ProviderSlug string              `json:"provider_slug,omitempty" doc:"custom_provider: the prefix of its models' names."`
	}
	docSecretProviderIn struct {
		Key     string            `json:"key,omitempty" doc:"Required for provider_key on create; never returned. An edit without it keeps the stored key."`
		URL     string            `json:"url,omitempty" doc:"custom_provider: http(s) base URL, without credentials, query or fragment; required for custom and azure." example:"http://127.0.0.1:11434/v1"`
		Version string            `json:"version,omitempty" doc:"custom_provider: the API version (Azure)."`
		Extras  map[string]string `json:"extras,omitempty" doc:"custom_provider: extra HTTP headers sent to the provider; sealed like the key and never returned."`
	}
)

// secretBindings are secretAPI.route's public routes.
func secretBindings() []apidoc.Binding {
	return []apidoc.Binding{
		{Method: "GET", Path: "/api/secrets", Response: []wire.Secret{}},
		{Method: "POST", Path: "/api/secrets", Request: docSecretBody{}, Response: wire.Secret{}},
		{Method: "GET", Path: "/api/secrets/{id}", Response: wire.Secret{}},
		{Method: "PUT", Path: "/api/secrets/{id}", Request: docSecretBody{}, Response: wire.Secret{}},
		{Method: "DELETE", Path: "/api/secrets/{id}"},
	}
}
