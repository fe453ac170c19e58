package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// workflowKind is the kind of one role of the workflow family: plain
// workflows, applications or evaluators share the tables and slugs.
func workflowKind(key, plural string) kind {
	k := kind{fam: versioned.Workflows, key: key, plural: plural, generic: true,
		revFlags: workflows.RevisionFlags,
		varFlags: func(v *versioned.Variant) json.RawMessage { return v.ArtifactFlags }}
	k.urlQuery = map[string]bool{"variant": true}
	if key != "workflow" {
		k.alias = "workflow"
	} else {
		k.urlQuery["artifact"], k.urlQuery["revision"] = true, true
	}
	switch key {
	case "evaluator":
		k.noWindowing, k.forkByQuery = true, true
	default:
		k.variantWindowing = true
	}
	return k
}

// workflowAPI serves /workflows, /applications or /evaluators and their
// catalogs.
type workflowAPI struct {
	git  *git
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
	a.git.editArtifactFn = handle(true, a.editArtifact)
	return a
}

func (a *workflowAPI) key() string { return a.git.k.key }

func (a *workflowAPI) route(e *echo.Echo) {
	a.git.route(e)
	p := "/" + a.git.k.plural
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
// (omitting them clears them, as the reference does); evaluators may not be
// renamed.
func (a *workflowAPI) editArtifact(rq *req) error {
	c, sc, id, b := rq.c, rq.sc, rq.id, rq.b
	key := a.key()
	in := b.require(key)
	if err := errOf(b); err != nil {
		return err
	}
	bid := in.id("id")
	h := in.header()
	folder := in.id("folder_id")
	if err := errOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		if key == "evaluator" {
			return send(c, envelope(key, nil))
		}
		return versioned.Invalid("The " + key + " id in the path does not match the id in the body.")
	}
	if h.Name != nil && strings.TrimSpace(*h.Name) == "" {
		return fieldInvalid("String should not be blank", *h.Name, "body", key, "name")
	}
	e := workflows.HeaderEdit{Header: h, FolderID: folder, SetFlags: a.role != "" || in.has("flags")}
	out, err := a.wf.EditHeader(c.Request().Context(), sc, key, id, e)
	return a.git.sendArtifact(c, out, err)
}

// ---- revisions

func (a *workflowAPI) revisionKey() string { return a.key() + "_revision" }

// ids reads the variant and artifact ids of a commit under any of their
// names; the artifact is derived from the variant.
func (a *workflowAPI) ids(in *body) (variant, artifact *uuid.UUID) {
	k := a.key()
	return in.id(k+"_variant_id", "workflow_variant_id", "variant_id"), in.id(k+"_id", "workflow_id", "artifact_id")
}

func (a *workflowAPI) createRevision(rq *req, in *body) error {
	c, sc := rq.c, rq.sc
	slug := in.slug("slug")
	h := in.header()
	v, _ := a.ids(in)
	if err := errOf(in); err != nil {
		return err
	}
	if v == nil {
		return send(c, envelope(a.revisionKey(), nil))
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

// commitInput reads a commit body: data and delta are exclusive; data is
// validated against the model, the delta's shape is checked.
func (a *workflowAPI) commitInput(in *body, loc []any) (workflows.CommitInput, error) {
	ci := workflows.CommitInput{Key: a.key(), Header: in.header(), Message: in.str("message"), Loc: loc}
	ci.Header.Flags = nil // revision flags are inferred from data, never sent
	slug := in.slug("slug")
	v, _ := a.ids(in)
	ci.BaseRevisionID = in.id("base_revision_id")
	if err := errOf(in); err != nil {
		return ci, err
	}
	if slug != nil {
		ci.Slug = *slug
	}
	if v == nil {
		return ci, versioned.Invalid(a.revisionKey() + "." + a.key() + "_variant_id is required.")
	}
	ci.VariantID = *v
	data, delta := in.m["data"], in.m["delta"]
	if !isNull(data) && !isNull(delta) {
		return ci, versioned.Invalid("Provide either data or delta for a commit, not both.")
	}
	if !isNull(data) {
		d, err := workflows.Decode(data)
		if err != nil || d == nil {
			return ci, fieldInvalid("Input should be a valid dictionary", data, append(loc, "data")...)
		}
		if err := workflows.Validate(d, append(loc, "data")...); err != nil {
			return ci, err
		}
		if err := a.wf.CheckParameters(d, append(loc, "data")...); err != nil {
			return ci, err
		}
		ci.Data = d
	}
	if !isNull(delta) {
		d, err := workflows.ParseDelta(delta, append(loc, "delta")...)
		if err != nil {
			return ci, err
		}
		ci.Delta = d
	}
	return ci, nil
}

func (a *workflowAPI) commit(rq *req, in *body, key string) error {
	c, sc := rq.c, rq.sc
	ci, err := a.commitInput(in, []any{"body", key})
	if err != nil {
		return err
	}
	ci.Strict = a.key() == "workflow"
	r, noChange, err := a.wf.Commit(c.Request().Context(), sc, ci)
	if err != nil {
		return err
	}
	if !ci.Strict {
		return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true}, func(e *obj) {
		if noChange {
			e.put("status", "no_change").put("warnings", []map[string]string{{"code": "no_change",
				"message": "The data and flags equal the head's; no revision was committed."}})
			return
		}
		e.put("status", "committed")
	})
}

// refs reads the entity and environment refs of a retrieve or deploy.
func (a *workflowAPI) refs(b *body) (refs, env versioned.Refs) {
	k := a.key()
	refs = versioned.Refs{Artifact: b.ref(k+"_ref", "workflow_ref"), Variant: b.ref(k+"_variant_ref", "workflow_variant_ref"),
		Revision: b.ref(k+"_revision_ref", "workflow_revision_ref")}
	env = versioned.Refs{Artifact: b.ref("environment_ref"), Variant: b.ref("environment_variant_ref"), Revision: b.ref("environment_revision_ref")}
	return refs, env
}

// retrieved is the outcome of a retrieve: the revision and, when read
// through an environment, the deployment.
func (a *workflowAPI) find(ctx context.Context, sc scope.Scope, b *body) (*versioned.Revision, *workflows.Deployment, error) {
	refs, env := a.refs(b)
	key := b.str("key")
	if err := errOf(b); err != nil {
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
	resolve := b.boolean(false, "resolve")
	opts, err := resolveOptions(b)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, d, err := a.find(ctx, sc, b)
	if err != nil {
		return err
	}
	if r == nil {
		return send(c, envelope(a.revisionKey(), nil))
	}
	var info any
	if resolve { // §3.3 point 7: resolved data plus resolution_info
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
	e := newObj().put("count", 1).put(a.revisionKey(), json.RawMessage(o.done()))
	a.retrievalInfo(e, r, d)
	e.put("resolution_info", info)
	return sendTagged(c, e.done())
}

func (a *workflowAPI) retrievalInfo(e *obj, r *versioned.Revision, d *workflows.Deployment) {
	refs := newObj()
	if d != nil {
		env := d.Environment
		ev := strconvVersion(env.Version)
		refs.put("environment", versioned.Ref{ID: &env.ArtifactID, Slug: &env.ArtifactSlug}).
			put("environment_variant", versioned.Ref{ID: &env.VariantID, Slug: &env.VariantSlug}).
			put("environment_revision", versioned.Ref{ID: &env.ID, Slug: &env.Slug, Version: &ev})
	}
	k := a.key()
	v := strconvVersion(r.Version)
	refs.put(k, versioned.Ref{ID: &r.ArtifactID, Slug: &r.ArtifactSlug}).
		put(k+"_variant", versioned.Ref{ID: &r.VariantID, Slug: &r.VariantSlug}).
		put(k+"_revision", versioned.Ref{ID: &r.ID, Slug: &r.Slug, Version: &v})
	info := newObj().put("references", json.RawMessage(refs.done()))
	if d != nil {
		info.put("selector", map[string]string{"key": d.Key})
	}
	e.put("retrieval_info", json.RawMessage(info.done()))
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
	opts, err := resolveOptions(b)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if inline := b.sub(a.revisionKey()); inline != nil {
		if isNull(inline.m["data"]) {
			return versioned.Invalid("An inline " + a.revisionKey() + " needs data to resolve.")
		}
		raw, err := resolveInline(ctx, a.wf, sc, a.revisionKey(), inline, opts)
		if err != nil {
			return err
		}
		return send(c, raw)
	}
	if err := errOf(b); err != nil {
		return err
	}
	r, d, err := a.find(ctx, sc, b)
	if err != nil {
		return err
	}
	if r == nil {
		return send(c, envelope(a.revisionKey(), nil))
	}
	r, info, err := a.wf.ResolveRevision(ctx, sc, r, opts)
	if err != nil {
		return err
	}
	o, err := a.git.renderRevision(ctx, sc, r, readOpts{withSlugs: true})
	if err != nil {
		return err
	}
	e := newObj().put("count", 1).put(a.revisionKey(), json.RawMessage(o.done()))
	e.put("resolution_info", info)
	a.retrievalInfo(e, r, d)
	return send(c, e.done())
}

func (a *workflowAPI) deploy(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	refs, env := a.refs(b)
	key, msg := b.str("key"), b.str("message")
	if err := errOf(b); err != nil {
		return err
	}
	r, err := a.wf.Deploy(c.Request().Context(), sc, a.key(), refs, env, key, msg)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true})
}
