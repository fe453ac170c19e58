package workflows

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// EmbedLookup resolves the targets of embed tokens (package embeds) in the
// project of sc:
//   - with environment refs alone (no workflow-family ref, no key), the
//     environment revision itself: the compatible platform embeds its own
//     data (its references), and no key is needed;
//   - with environment refs and a workflow-family ref or a key, the
//     revision the environment deploys under the key, as retrieve does
//     (RetrieveByEnvironment): the key defaults to "<artifact slug>.revision", and any
//     workflow-family refs must match;
//   - otherwise the workflow-family refs, with the retrieve rules
//     (versioned.Service.Resolve);
//   - an <e>_revision ref {slug, version} that names no revision is read as
//     the compatible platform's clients write it: slug is the artifact's,
//     so it means that version of the artifact's default variant (the
//     latest without a version).
func (s *Service) EmbedLookup(sc scope.Scope) embeds.Lookup {
	return func(ctx context.Context, t embeds.Target) (*embeds.Found, error) {
		role, refs := "workflow", versioned.Refs{}
		for _, e := range embeds.Families {
			rs := versioned.Refs{Artifact: t.Ref(e), Variant: t.Ref(e + "_variant"), Revision: t.Ref(e + "_revision")}
			if !rs.Empty() {
				role, refs = e, rs
				break
			}
		}
		env := versioned.Refs{Artifact: t.Ref(embeds.Environment), Variant: t.Ref(embeds.Environment + "_variant"),
			Revision: t.Ref(embeds.Environment + "_revision")}
		if !env.Empty() && refs.Empty() && t.Key == nil {
			rev, err := s.reg.Resolve(ctx, sc, versioned.Environments, embeds.Environment, env)
			if err != nil || rev == nil {
				return nil, err
			}
			return &embeds.Found{Revision: rev, Entity: embeds.Environment}, nil
		}
		if !env.Empty() || t.Key != nil {
			d, err := s.RetrieveByEnvironment(ctx, sc, role, refs, env, t.Key)
			if err != nil || d == nil {
				return nil, err
			}
			return &embeds.Found{Revision: d.Revision, Environment: d.Environment}, nil
		}
		if refs.Empty() {
			return nil, nil
		}
		rev, err := s.reg.Resolve(ctx, sc, versioned.Workflows, role, refs)
		if err != nil || rev != nil {
			return &embeds.Found{Revision: rev}, err
		}
		if rr := refs.Revision; refs.Artifact == nil && refs.Variant == nil && rr != nil && rr.ID == nil && rr.Slug != nil {
			bySlug := versioned.Refs{Artifact: &versioned.Ref{Slug: rr.Slug}}
			if rr.Version != nil {
				bySlug.Revision = &versioned.Ref{Version: rr.Version}
			}
			rev, err = s.reg.Resolve(ctx, sc, versioned.Workflows, role, bySlug)
		}
		return &embeds.Found{Revision: rev}, err
	}
}

// ResolveRevision returns a copy of r whose data has its embeds expanded
// in the project of sc (see package embeds), with the resolution info.
func (s *Service) ResolveRevision(ctx context.Context, sc scope.Scope, r *versioned.Revision, o embeds.Options) (*versioned.Revision, *embeds.Info, error) {
	data, info, err := s.ResolveData(ctx, sc, r.Data, &r.ID, o)
	if err != nil {
		return nil, nil, err
	}
	cp := *r
	cp.Data = data
	return &cp, info, nil
}

// ResolveData expands the embeds of data (an inline revision's when
// self is nil) in the project of sc.
func (s *Service) ResolveData(ctx context.Context, sc scope.Scope, data json.RawMessage, self *uuid.UUID, o embeds.Options) (json.RawMessage, *embeds.Info, error) {
	return embeds.Resolve(ctx, data, self, s.EmbedLookup(sc), o)
}
