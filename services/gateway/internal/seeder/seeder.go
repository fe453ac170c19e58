// Package seeder gives a new project its default environments and
// evaluators by calling the registry, which owns them, with the internal
// token and the new project's scope: the same path any request takes, so
// the registry's validation and transactions apply unchanged.
package seeder

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Seeder implements accounts.Seeder over the registry's HTTP API.
type Seeder struct{ registry *svcclient.Client }

// New returns a seeder calling the registry at base.
func New(base, token string, timeout time.Duration) *Seeder {
	return &Seeder{registry: svcclient.New(base, token, timeout)}
}

// item is one default: a simple-surface path and its body.
type item struct {
	path string
	body map[string]any
}

// defaults are the compatible platform's seeded defaults: three environments
// and three evaluators, one of them from the feedback template's
// quality-rating preset.
func defaults() []item {
	env := func(slug, name string) item {
		return item{"/simple/environments", map[string]any{"environment": map[string]any{"slug": slug, "name": name}}}
	}
	ev := func(slug, name string, data map[string]any) item {
		return item{"/simple/evaluators", map[string]any{"evaluator": map[string]any{"slug": slug, "name": name, "data": data}}}
	}
	return []item{
		env("development", "Development"),
		env("staging", "Staging"),
		env("production", "Production"),
		ev("exact-match", "Exact Match", map[string]any{"uri": "svc:builtin:auto_exact_match:v0",
			"parameters": map[string]any{"correct_answer_key": "correct_answer"}}),
		ev("contains-json", "Contains JSON", map[string]any{"uri": "svc:builtin:auto_contains_json:v0"}),
		ev("quality-rating", "Quality Rating", map[string]any{"uri": "svc:custom:feedback:v0",
			"schemas": map[string]any{"outputs": map[string]any{
				"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
				"properties": map[string]any{"approved": map[string]any{"type": "boolean"}},
				"required":   []string{"approved"}, "additionalProperties": false}}}),
	}
}

// SeedProject creates the defaults in the project. A default that already
// exists (409, duplicate slug) is left alone, so seeding can be repeated.
func (s *Seeder) SeedProject(ctx context.Context, projectID, userID uuid.UUID) error {
	sc := scope.Scope{ProjectID: projectID, UserID: userID}
	for _, it := range defaults() {
		if err := s.post(ctx, sc, it); err != nil {
			return err
		}
	}
	return nil
}

func (s *Seeder) post(ctx context.Context, sc scope.Scope, it item) error {
	status, b, err := s.registry.Post(ctx, sc, it.path, it.body, 4096)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if status == http.StatusConflict || status == http.StatusOK {
		return nil
	}
	return fmt.Errorf("seed %s: registry answered %d: %s", it.path, status, b)
}
