package invoke

import (
	"context"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// Providers is what the project's calls can reach: the answer of GET
// /services/models, which a model picker lists.
type Providers struct {
	Providers []llm.Provider `json:"providers"`
	// Default is the model a new prompt or judge should start with: the
	// first model of the first provider listed (a custom provider's when
	// the project added one), empty when nothing is configured.
	Default string `json:"default"`
}

// ProviderTest names the provider a connection test calls: a secret's slug
// or a family name (its stored key, else the runtime's environment key).
type ProviderTest struct {
	Provider string `json:"provider"`
}

// Providers lists the providers and models the project's calls can reach.
// It reads the vault afresh (forgetting the cached secrets): a picker is
// opened right after a provider is added, and must list it.
func (s *Service) Providers(ctx context.Context, sc scope.Scope) (Providers, error) {
	s.Secrets.Forget(sc.ProjectID)
	secrets, err := s.Secrets.Secrets(ctx, sc)
	if err != nil {
		return Providers{}, err
	}
	out := Providers{Providers: s.LLM.Providers(secrets)}
	for _, p := range out.Providers {
		if len(p.Models) > 0 {
			out.Default = p.Models[0]
			break
		}
	}
	return out, nil
}

// TestProvider makes one cheap request to the provider named, as the
// project's calls would reach it (llm.Client.Check), with the vault read
// afresh: the provider tested is often the one just added or fixed.
func (s *Service) TestProvider(ctx context.Context, sc scope.Scope, req ProviderTest) (llm.Check, error) {
	s.Secrets.Forget(sc.ProjectID)
	secrets, err := s.Secrets.Secrets(ctx, sc)
	if err != nil {
		return llm.Check{}, err
	}
	return s.LLM.Check(ctx, secrets, req.Provider)
}
