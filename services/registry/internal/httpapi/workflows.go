package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// workflowAPI serves /workflows, /applications or /evaluators and their
// catalogs.
type workflowAPI struct {
	*git
	wf   *workflows.Service
	role string // "" for workflows, else the flag the role forces
}

func newWorkflowAPI(wf *workflows.Service, key, plural string) *workflowAPI {
	a := &workflowAPI{wf: wf}
	switch key {
	case "application":
		a.role = "is_application"
	case "evaluator":
		a.role = "is_evaluator"
	}
	a.git = &git{k: workflowKind(key, plural), lin: wf.Lineage(key)}
	a.git.fam = a
	return a
}

func (a *workflowAPI) key() string { return a.git.k.Key }

func (a *workflowAPI) route(e *echo.Echo) {
	a.git.route(e)
	p := "/" + a.git.k.Plural
	e.POST(p+"/revisions", withObject(false, a.revisionKey(), a.createRevision))
	e.POST(p+"/revisions/commit", withCommit(a.revisionKey(), a.commit))
	e.POST(p+"/revisions/retrieve", handle(false, a.retrieve))
	e.POST(p+"/revisions/resolve", handle(false, a.resolve))
	e.POST(p+"/revisions/deploy", handle(false, a.deploy))

	a.routeCatalog(e, p)
}

// ---- artifact edit

// editArtifact is the workflow family's partial edit: only fields present
// and non-null change. Applications and evaluators always replace flags
// (omitting them clears them, as the compatible platform does); evaluators may not be
// renamed.
func (a *workflowAPI) editArtifact(rq *req) error {
	c, sc, id, b := rq.c, rq.sc, rq.id, rq.b
	key := a.key()
	in := b.Require(key)
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	bid := in.ID("id")
	h := in.Header()
	folder := in.ID("folder_id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		if key == "evaluator" {
			return send(c, wire.Envelope(key, nil))
		}
		return versioned.Invalid("The " + key + " id in the path does not match the id in the body.")
	}
	if h.Name != nil && strings.TrimSpace(*h.Name) == "" {
		return wire.FieldInvalid("String should not be blank", *h.Name, "body", key, "name")
	}
	e := workflows.HeaderEdit{Header: h, FolderID: folder, SetFlags: a.role != "" || in.Has("flags")}
	out, err := a.wf.EditHeader(c.Request().Context(), sc, key, id, e)
	return a.git.sendArtifact(c, out, err)
}

// ---- revisions

func (a *workflowAPI) revisionKey() string { return a.key() + "_revision" }

func (a *workflowAPI) createRevision(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	slug := in.Slug("slug")
	h := in.Header()
	v, _ := wire.WorkflowIDs(in, a.key())
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if v == nil {
		return send(c, wire.Envelope(a.revisionKey(), nil))
	}
	ci := workflows.CommitInput{Key: a.key(), VariantID: *v, Header: h, Initial: true}
	ci.Header.Flags = nil
	msg := "Initial revision"
	ci.Message = &msg
	if slug != nil {
		ci.Slug = *slug
	}
	r, _, err := a.wf.Commit(c.Request().Context(), sc, ci)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
}

func (a *workflowAPI) commit(rq *req, in *wire.Body, key string) error {
	c, sc := rq.c, rq.sc
	loc := []any{"body", key}
	ci, err := wire.WorkflowCommit(in, a.key(), loc)
	if err != nil {
		return err
	}
	if ci.Data != nil {
		if err := a.wf.CheckParameters(ci.Data, append(loc, "data")...); err != nil {
			return err
		}
	}
	ci.Strict = a.key() == "workflow"
	r, noChange, err := a.wf.Commit(c.Request().Context(), sc, ci)
	if err != nil {
		return err
	}
	if !ci.Strict {
		return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true}, func(e *wire.Obj) {
		if noChange {
			e.Put("status", "no_change").Put("warnings", []map[string]string{{"code": "no_change",
				"message": "The data and flags equal the head's; no revision was committed."}})
			return
		}
		e.Put("status", "committed")
	})
}

// refs reads the entity and environment refs of a retrieve or deploy.
func (a *workflowAPI) refs(b *wire.Body) (refs, env versioned.Refs) {
	k := a.key()
	refs = versioned.Refs{Artifact: b.Ref(k+"_ref", "workflow_ref"), Variant: b.Ref(k+"_variant_ref", "workflow_variant_ref"),
		Revision: b.Ref(k+"_revision_ref", "workflow_revision_ref")}
	env = versioned.Refs{Artifact: b.Ref("environment_ref"), Variant: b.Ref("environment_variant_ref"), Revision: b.Ref("environment_revision_ref")}
	return refs, env
}

// retrieved is the outcome of a retrieve: the revision and, when read
// through an environment, the deployment.
func (a *workflowAPI) find(ctx context.Context, sc scope.Scope, b *wire.Body) (*versioned.Revision, *workflows.Deployment, error) {
	refs, env := a.refs(b)
	key := b.Str("key")
	if err := wire.ErrOf(b); err != nil {
		return nil, nil, err
	}
	if refs.Empty() && env.Empty() {
		return nil, nil, versioned.Invalid("Provide " + a.key() + " refs or environment refs with key to retrieve a(n) " + a.key() + " revision.")
	}
	if !env.Empty() || key != nil {
		d, err := a.wf.RetrieveByEnvironment(ctx, sc, a.key(), refs, env, key)
		if err != nil || d == nil {
			return nil, nil, err
		}
		return d.Revision, d, nil
	}
	r, err := a.wf.Resolve(ctx, sc, a.key(), refs)
	return r, nil, err
}

// retrieve answers the revision named by refs or deployed in an
// environment. The answer carries an ETag over its bytes: runtimes poll it
// on every request, and an unchanged deployment costs them a 304.
func (a *workflowAPI) retrieve(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	resolve := b.Bool(false, "resolve")
	opts, err := b.ResolveOptions()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, d, err := a.find(ctx, sc, b)
	if err != nil {
		return err
	}
	if r == nil {
		return send(c, wire.Envelope(a.revisionKey(), nil))
	}
	var info any
	if resolve { // resolved data plus resolution_info
		rr, in, err := a.wf.ResolveRevision(ctx, sc, r, opts)
		if err != nil {
			return err
		}
		r, info = rr, in
	}
	o, err := a.git.renderRevision(ctx, sc, r, readOpts{withSlugs: true})
	if err != nil {
		return err
	}
	e := wire.NewObj().Put("count", 1).Put(a.revisionKey(), json.RawMessage(o.Done()))
	a.retrievalInfo(e, r, d)
	e.Put("resolution_info", info)
	return sendTagged(c, e.Done())
}

func (a *workflowAPI) retrievalInfo(e *wire.Obj, r *versioned.Revision, d *workflows.Deployment) {
	if d == nil {
		e.Put("retrieval_info", a.k.RetrievalInfo(r, nil, ""))
		return
	}
	e.Put("retrieval_info", a.k.RetrievalInfo(r, d.Environment, d.Key))
}

// sendTagged answers raw with a strong ETag over its bytes, or 304 when
// the client already holds them.
func sendTagged(c echo.Context, raw json.RawMessage) error {
	sum := sha256.Sum256(raw)
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	c.Response().Header().Set("ETag", tag)
	if inm := c.Request().Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == tag || t == "*" {
				return c.NoContent(http.StatusNotModified)
			}
		}
	}
	return send(c, raw)
}

// resolve is retrieve with the data's embeds expanded (package embeds)
// and resolution_info; an inline <e>_revision is resolved as sent.
func (a *workflowAPI) resolve(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	opts, err := b.ResolveOptions()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if inline := b.Sub(a.revisionKey()); inline != nil {
		if wire.IsNull(inline.Value("data")) {
			return versioned.Invalid("An inline " + a.revisionKey() + " needs data to resolve.")
		}
		raw, err := resolveInline(ctx, a.wf, sc, a.revisionKey(), inline, opts)
		if err != nil {
			return err
		}
		return send(c, raw)
	}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r, d, err := a.find(ctx, sc, b)
	if err != nil {
		return err
	}
	if r == nil {
		return send(c, wire.Envelope(a.revisionKey(), nil))
	}
	r, info, err := a.wf.ResolveRevision(ctx, sc, r, opts)
	if err != nil {
		return err
	}
	o, err := a.git.renderRevision(ctx, sc, r, readOpts{withSlugs: true})
	if err != nil {
		return err
	}
	e := wire.NewObj().Put("count", 1).Put(a.revisionKey(), json.RawMessage(o.Done()))
	e.Put("resolution_info", info)
	a.retrievalInfo(e, r, d)
	return send(c, e.Done())
}

func (a *workflowAPI) deploy(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	refs, env := a.refs(b)
	key, msg := b.Str("key"), b.Str("message")
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r, err := a.wf.Deploy(c.Request().Context(), sc, a.key(), refs, env, key, msg)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
}
