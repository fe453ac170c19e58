package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// ConfigRef is a reference of the compatible platform's legacy
// configuration fetch (POST /variants/configs/fetch, its SDK 0.27 to
// 0.95): any of slug, version (a number) and id.
type ConfigRef struct {
	Slug    *string
	Version *int
	ID      *uuid.UUID
}

func (r *ConfigRef) empty() bool { return r == nil || r.Slug == nil && r.Version == nil && r.ID == nil }

// ConfigFetch is the legacy fetch's body.
type ConfigFetch struct {
	Variant, Environment, Application *ConfigRef
}

// FetchedConfig is what the legacy fetch answers: the revision's parameters and
// where they come from. Environment is set for a fetch through an
// environment only.
type FetchedConfig struct {
	Revision    *versioned.Revision
	Application *versioned.Artifact
	// Environment is the environment revision the application was read
	// from (its ArtifactID and ArtifactSlug name the environment).
	Environment *versioned.Revision
}

// ErrConfigNotFound is the legacy fetch's answer when nothing matches, as
// the compatible platform words it (its SDK shows the detail).
var ErrConfigNotFound = errs.New(errs.NotFound, "registry.config_not_found", "Config not found.")

// FetchConfig applies the compatible platform's legacy fetch rules on the
// same lookups as the revision retrieve: a variant_ref names a variant's
// revision (its version, else the latest; an id is tried as a revision id
// first, then as a variant id); otherwise the application deployed in
// environment_ref (production when absent) under the key
// "<application slug>.revision", at the environment's version when given.
// Nothing found is ErrConfigNotFound. The revision's data is resolved
// (embeds expanded), as the current SDK's retrieve asks for.
func (s *Service) FetchConfig(ctx context.Context, sc scope.Scope, in ConfigFetch) (*FetchedConfig, error) {
	var (
		rev *versioned.Revision
		env *versioned.Revision
		err error
	)
	app := appRef(in.Application)
	switch {
	case !in.Variant.empty():
		v := in.Variant
		if v.ID != nil {
			rev, err = s.Resolve(ctx, sc, "application", versioned.Refs{Revision: &versioned.Ref{ID: v.ID}})
			if err == nil && rev == nil {
				rev, err = s.Resolve(ctx, sc, "application", versioned.Refs{Artifact: app, Variant: &versioned.Ref{ID: v.ID}, Revision: versionRef(v.Version)})
			}
		} else {
			rev, err = s.Resolve(ctx, sc, "application", versioned.Refs{Artifact: app, Variant: &versioned.Ref{Slug: v.Slug}, Revision: versionRef(v.Version)})
		}
	case app != nil:
		envRef := &versioned.Ref{Slug: ptr("production")}
		var envRev *versioned.Ref
		if e := in.Environment; !e.empty() {
			envRef = &versioned.Ref{ID: e.ID, Slug: e.Slug}
			if e.ID == nil && e.Slug == nil {
				envRef.Slug = ptr("production")
			}
			envRev = versionRef(e.Version)
		}
		var d *Deployment
		d, err = s.RetrieveByEnvironment(ctx, sc, "application", versioned.Refs{Artifact: app}, versioned.Refs{Artifact: envRef, Revision: envRev}, nil)
		if d != nil {
			rev, env = d.Revision, d.Environment
		}
	}
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) && e.Kind == errs.NotFound || errors.Is(err, versioned.ErrNotFound) {
			return nil, ErrConfigNotFound
		}
		return nil, err
	}
	if rev == nil {
		return nil, ErrConfigNotFound
	}
	if rev, _, err = s.ResolveRevision(ctx, sc, rev, embeds.Defaults()); err != nil {
		return nil, err
	}
	art, err := s.reg.Artifact(ctx, sc, versioned.Workflows, rev.ArtifactID)
	if err != nil {
		return nil, err
	}
	return &FetchedConfig{Revision: rev, Application: art, Environment: env}, nil
}

// appRef is the application_ref as a lookup ref, nil when it names none.
func appRef(r *ConfigRef) *versioned.Ref {
	if r == nil || r.ID == nil && r.Slug == nil {
		return nil
	}
	return &versioned.Ref{ID: r.ID, Slug: r.Slug}
}

// versionRef is a revision ref by version, nil without one.
func versionRef(v *int) *versioned.Ref {
	if v == nil {
		return nil
	}
	s := strconv.Itoa(*v)
	return &versioned.Ref{Version: &s}
}

func ptr[T any](v T) *T { return &v }

// Parameters is the revision's data.parameters (null when it has none).
func (c *FetchedConfig) Parameters() json.RawMessage {
	var d struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	_ = json.Unmarshal(c.Revision.Data, &d)
	if len(d.Parameters) == 0 {
		return json.RawMessage("{}")
	}
	return d.Parameters
}

// URL is the revision's data.url, "" when it has none.
func (c *FetchedConfig) URL() string {
	var d struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(c.Revision.Data, &d)
	return d.URL
}

// ConfigLifecycle is one legacy lifecycle: when a record was created and
// last changed, and by whom.
type ConfigLifecycle struct {
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   *time.Time `json:"updated_at"`
	UpdatedByID *uuid.UUID `json:"updated_by_id"`
	// UpdatedBy is the user's name in the compatible platform; the
	// registry knows users by id only, so it stays null.
	UpdatedBy *string `json:"updated_by"`
}

// LifecycleOf is the legacy lifecycle of a record: a revision is never
// edited, so its update is its commit.
func LifecycleOf(l versioned.Lifecycle, author *uuid.UUID) ConfigLifecycle {
	out := ConfigLifecycle{CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, UpdatedByID: l.UpdatedByID}
	if out.UpdatedAt == nil {
		out.UpdatedAt = &out.CreatedAt
	}
	if out.UpdatedByID == nil {
		out.UpdatedByID = l.CreatedByID
	}
	if out.UpdatedByID == nil {
		out.UpdatedByID = author
	}
	return out
}
