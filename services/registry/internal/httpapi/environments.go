package httpapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// environmentAPI serves /environments and /simple/environments.
type environmentAPI struct {
	*git
	envs   *environments.Service
	wf     *workflows.Service // resolves embeds
	simple *simpleAPI
}

func newEnvironmentAPI(envs *environments.Service, wf *workflows.Service) *environmentAPI {
	a := &environmentAPI{envs: envs, wf: wf}
	a.git = &git{k: environmentKind, lin: envs.Lineage()}
	a.git.fam = a
	a.simple = &simpleAPI{k: environmentKind, uc: envs.Simple()}
	return a
}

// narrowRevisions applies the revision query's extra `references: [Ref]`:
// it keeps the revisions where the deployment of those applications
// changed (as the compatible platform filters them), after the query's own
// windowing.
func (a *environmentAPI) narrowRevisions(ctx context.Context, sc scope.Scope, b *wire.Body, rs []versioned.Revision) ([]versioned.Revision, error) {
	refs := b.Refs("references")
	if err := wire.ErrOf(b); err != nil {
		return nil, err
	}
	if refs == nil {
		return rs, nil
	}
	return a.envs.DeploymentChanged(ctx, sc, rs, refs)
}

func (a *environmentAPI) route(e *echo.Echo) {
	a.git.route(e)
	e.POST("/environments/revisions", withObject(false, "environment_revision", a.createRevision))
	e.POST("/environments/revisions/commit", withCommit("environment_revision", a.commit))
	e.POST("/environments/revisions/retrieve", a.retrieve(false))
	e.POST("/environments/revisions/resolve", a.retrieve(true))
	a.simple.route(e)
	e.POST("/simple/environments/:id/guard", byID(archiving(a.envs.Guard, true), a.simple.sendRecord))
	e.POST("/simple/environments/:id/unguard", byID(archiving(a.envs.Guard, false), a.simple.sendRecord))
}

func (a *environmentAPI) createRevision(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	r := in.Revision("environment", false, true)
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if r.VariantID == nil {
		return send(c, wire.Envelope("environment_revision", nil))
	}
	msg := wire.InitialMessage
	cm := environments.Commit{Header: r.Header, Initial: true, VariantID: *r.VariantID, Slug: r.SlugOr(), Message: &msg}
	if r.ArtifactID != nil {
		cm.ArtifactID = *r.ArtifactID
	}
	out, err := a.envs.Commit(c.Request().Context(), sc, cm)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, out, readOpts{withSlugs: true})
}

// commit serves /environments/revisions/commit (wire.EnvironmentCommit).
func (a *environmentAPI) commit(rq *req, in *wire.Body, key string) error {
	c, sc := rq.c, rq.sc
	cm, err := wire.EnvironmentCommit(in, key)
	if err != nil {
		return err
	}
	r, err := a.envs.Commit(c.Request().Context(), sc, cm)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
}

func (a *environmentAPI) retrieve(resolve bool) echo.HandlerFunc {
	return handle(false, func(rq *req) error {
		c, sc, b := rq.c, rq.sc, rq.b
		refs := versioned.Refs{Artifact: b.Ref("environment_ref"), Variant: b.Ref("environment_variant_ref"), Revision: b.Ref("environment_revision_ref")}
		expand := resolve || b.Bool(false, "resolve")
		if err := wire.ErrOf(b); err != nil {
			return err
		}
		opts, err := b.ResolveOptions()
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		r, err := a.envs.Resolve(ctx, sc, refs)
		if err != nil {
			return err
		}
		if r == nil {
			return send(c, wire.Envelope("environment_revision", nil))
		}
		extra := []func(*wire.Obj){a.git.retrievalInfo(r)}
		if expand {
			// Environment data is references only, so there is rarely a
			// token to expand; the same resolver runs for the same answer.
			rr, info, err := a.wf.ResolveRevision(ctx, sc, r, opts)
			if err != nil {
				return err
			}
			r = rr
			extra = append(extra, putResolution(info))
		}
		return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true}, extra...)
	})
}
