package wire

import (
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/vaultwire"
	"github.com/assayhq/assay/services/registry/internal/secrets"
)

// Secret is a secret as every public route renders it: never its key nor
// its extra headers, which secrets.Secret does not even hold.
type Secret struct {
	ID        uuid.UUID    `json:"id"`
	Kind      secrets.Kind `json:"kind" doc:"provider_key or custom_provider."`
	Header    SecretHeader `json:"header"`
	Data      SecretData   `json:"data"`
	Slug      string       `json:"slug" doc:"Unique in the project; llm_config.connection names it."`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt *time.Time   `json:"updated_at"`
}

// SecretHeader is a secret's name and description.
type SecretHeader struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// SecretData is what a secret shows of its data; the key is never in it.
type SecretData struct {
	Kind         string         `json:"kind" doc:"The provider family (openai, anthropic, ...) or custom provider kind (custom, azure, ...)."`
	Provider     SecretProvider `json:"provider"`
	Models       []SecretModel  `json:"models,omitempty"`
	ProviderSlug string         `json:"provider_slug,omitempty" doc:"Custom providers: the prefix of their models' names (the secret's slug unless given)."`
}

// SecretProvider is where a custom provider is reached.
type SecretProvider struct {
	URL     string `json:"url,omitempty"`
	Version string `json:"version,omitempty"`
}

// SecretModel is a model a custom provider serves.
type SecretModel struct {
	Slug string `json:"slug"`
}

// PublicSecret renders s for the public routes.
func PublicSecret(s secrets.Secret) Secret {
	out := Secret{ID: s.ID, Kind: s.Kind, Header: SecretHeader{Name: s.Header.Name, Description: s.Header.Description},
		Data: SecretData{Kind: s.Data.Kind, Provider: SecretProvider{URL: s.Data.Provider.URL, Version: s.Data.Provider.Version},
			ProviderSlug: s.Data.ProviderSlug},
		Slug: s.Slug, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	for _, m := range s.Data.Models {
		out.Data.Models = append(out.Data.Models, SecretModel{Slug: m.Slug})
	}
	return out
}

// Vault renders the revealed secrets of a project as the runtime reads
// them (pkg/vaultwire): keys and extra headers included, so only the
// internal route may send it.
func Vault(rs []secrets.Revealed) vaultwire.Secrets {
	out := vaultwire.Secrets{ProviderKeys: []vaultwire.ProviderKey{}, CustomProviders: []vaultwire.CustomProvider{}}
	for _, r := range rs {
		if r.Kind == secrets.KindProviderKey {
			out.ProviderKeys = append(out.ProviderKeys, vaultwire.ProviderKey{Slug: r.Slug, Kind: r.Data.Kind, Key: r.Key})
			continue
		}
		cp := vaultwire.CustomProvider{Slug: r.Slug, Kind: r.Data.Kind, URL: r.Data.Provider.URL,
			Version: r.Data.Provider.Version, Key: r.Key, Headers: r.Extras}
		for _, m := range r.Data.Models {
			cp.Models = append(cp.Models, m.Slug)
		}
		out.CustomProviders = append(out.CustomProviders, cp)
	}
	return out
}
