package workflows_test

// The workflow-family deploy and environment-backed retrieve
// (Service.Deploy, Service.RetrieveByEnvironment) and the commit rules
// (Service.Commit) over the registry service and a real PostgreSQL. A
// failure here names the workflows service; the HTTP tests
// (internal/httpapi) check the routes over it.

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

type world struct {
	reg *versioned.Service
	wf  *workflows.Service
	sc  scope.Scope
}

// TestService runs each contract on one migrated database, each in a
// project of its own.
func TestService(t *testing.T) {
	reg := versionedtest.New(t)
	cat, err := catalog.New("svc")
	require.NoError(t, err)
	wf := workflows.NewService(reg, environments.NewService(reg), cat, workflows.Config{Provider: "svc"})
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"DeployWritesTheRevisionUnderSlugDotRevision", testDeployThenRetrieve},
		{"DeployKeepsTheOtherKeysAndRedeployReplacesOne", testDeployKeepsOtherKeys},
		{"RetrieveByEnvironmentDerivesOrTakesTheKey", testRetrieveKeys},
		{"RetrieveReadsTheEnvironmentRevisionItIsGiven", testRetrieveHistoricEnvironment},
		{"AWorkflowRetrieveReadsAnApplicationDeploy", testWorkflowReadsApplicationDeploy},
		{"DeployAndRetrieveErrorsSayWhatIsMissing", testDeployAndRetrieveErrors},
		{"DeploymentsOfAnotherProjectAreNotFound", testDeployProjectIsolation},
		{"CommitRefusesAStaleBaseRevision", testCommitBaseRevision},
		{"AStrictCommitOfTheSameDataWritesNothing", testStrictNoChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &world{reg: reg, wf: wf, sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}})
		})
	}
}

// app stores a workflow with one variant and revisions of the given data
// (versions 0, 1, ...); it returns them.
func (w *world) app(t *testing.T, slug string, data ...string) []*versioned.Revision {
	t.Helper()
	ctx := context.Background()
	a, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Workflows, &versioned.Artifact{Slug: slug, Header: versioned.Header{Flags: json.RawMessage(`{"is_application":true}`)}})
	require.NoError(t, err)
	v, err := w.reg.CreateVariant(ctx, w.sc, versioned.Workflows, &versioned.Variant{ArtifactID: a.ID, Slug: slug + ".default"})
	require.NoError(t, err)
	var out []*versioned.Revision
	for _, d := range data {
		r, err := w.reg.Commit(ctx, w.sc, versioned.Workflows, versioned.Commit{Revision: versioned.Revision{VariantID: v.ID, Data: json.RawMessage(d)}})
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// environment stores an environment with a first, empty revision.
func (w *world) environment(t *testing.T, slug string) *versioned.Revision {
	t.Helper()
	ctx := context.Background()
	a, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Environments, &versioned.Artifact{Slug: slug})
	require.NoError(t, err)
	v, err := w.reg.CreateVariant(ctx, w.sc, versioned.Environments, &versioned.Variant{ArtifactID: a.ID, Slug: slug + ".default"})
	require.NoError(t, err)
	r, err := w.reg.Commit(ctx, w.sc, versioned.Environments, versioned.Commit{Revision: versioned.Revision{VariantID: v.ID}})
	require.NoError(t, err)
	return r
}

func bySlug(s string) *versioned.Ref              { return &versioned.Ref{Slug: &s} }
func byID(id uuid.UUID) *versioned.Ref            { return &versioned.Ref{ID: &id} }
func envRefs(slug string) versioned.Refs          { return versioned.Refs{Artifact: bySlug(slug)} }
func revRef(r *versioned.Revision) versioned.Refs { return versioned.Refs{Revision: byID(r.ID)} }

func (w *world) deploy(t *testing.T, role string, refs versioned.Refs, env string, key *string) *versioned.Revision {
	t.Helper()
	r, err := w.wf.Deploy(context.Background(), w.sc, role, refs, envRefs(env), key, nil)
	require.NoError(t, err)
	return r
}

func (w *world) retrieve(t *testing.T, role string, refs versioned.Refs, env string, key *string) *workflows.Deployment {
	t.Helper()
	d, err := w.wf.RetrieveByEnvironment(context.Background(), w.sc, role, refs, envRefs(env), key)
	require.NoError(t, err)
	require.NotNil(t, d)
	return d
}

func requireKind(t *testing.T, err error, kind errs.Kind, what string) {
	t.Helper()
	require.Error(t, err, what)
	assert.Equal(t, kind, errs.KindOf(err), "%s: %v", what, err)
}

func testDeployThenRetrieve(t *testing.T, w *world) {
	ctx := context.Background()
	revs := w.app(t, "my-app", `{"v":0}`, `{"v":1}`)
	env := w.environment(t, "prod")

	deployed := w.deploy(t, "application", versioned.Refs{Artifact: bySlug("my-app")}, "prod", nil)
	assert.Equal(t, revs[1].ID, deployed.ID, "an artifact ref deploys its latest revision")

	head, err := w.reg.LatestRevision(ctx, w.sc, versioned.Environments, env.VariantID)
	require.NoError(t, err)
	assert.Equal(t, 1, head.Version, "a deploy is a new environment revision")
	refs := environments.ReferencesOf(head)
	require.Contains(t, refs, "my-app.revision", "the key is <artifact slug>.revision")
	g := refs["my-app.revision"]
	assert.Equal(t, revs[1].ArtifactID, *g["application"].ID)
	assert.Equal(t, revs[1].VariantID, *g["application_variant"].ID)
	assert.Equal(t, revs[1].ID, *g["application_revision"].ID)
	assert.Equal(t, "1", *g["application_revision"].Version)

	d := w.retrieve(t, "application", versioned.Refs{Artifact: bySlug("my-app")}, "prod", nil)
	assert.Equal(t, revs[1].ID, d.Revision.ID)
	assert.Equal(t, head.ID, d.Environment.ID)
	assert.Equal(t, "my-app.revision", d.Key)

	// A later commit to the app does not change what is deployed.
	_, err = w.reg.Commit(ctx, w.sc, versioned.Workflows, versioned.Commit{Revision: versioned.Revision{VariantID: revs[0].VariantID, Data: json.RawMessage(`{"v":2}`)}})
	require.NoError(t, err)
	d = w.retrieve(t, "application", versioned.Refs{Artifact: bySlug("my-app")}, "prod", nil)
	assert.Equal(t, revs[1].ID, d.Revision.ID)
}

func testDeployKeepsOtherKeys(t *testing.T, w *world) {
	a := w.app(t, "a", `{"a":0}`, `{"a":1}`)
	b := w.app(t, "b", `{"b":0}`)
	w.environment(t, "prod")
	w.deploy(t, "application", revRef(a[1]), "prod", nil)
	w.deploy(t, "application", revRef(b[0]), "prod", nil)
	w.deploy(t, "application", revRef(a[0]), "prod", nil) // a rollback

	assert.Equal(t, a[0].ID, w.retrieve(t, "application", versioned.Refs{Artifact: bySlug("a")}, "prod", nil).Revision.ID, "the redeploy replaced a's key")
	assert.Equal(t, b[0].ID, w.retrieve(t, "application", versioned.Refs{Artifact: bySlug("b")}, "prod", nil).Revision.ID, "b's key is kept")
}

func testRetrieveKeys(t *testing.T, w *world) {
	revs := w.app(t, "keyed", `{"k":0}`)
	w.environment(t, "prod")
	custom := "custom-key"
	w.deploy(t, "application", revRef(revs[0]), "prod", &custom)

	d := w.retrieve(t, "application", versioned.Refs{}, "prod", &custom)
	assert.Equal(t, revs[0].ID, d.Revision.ID, "by an explicit key")
	assert.Equal(t, custom, d.Key)

	_, err := w.wf.RetrieveByEnvironment(context.Background(), w.sc, "application", versioned.Refs{Artifact: bySlug("keyed")}, envRefs("prod"), nil)
	requireKind(t, err, errs.NotFound, "the derived key keyed.revision was not deployed")

	w.deploy(t, "application", revRef(revs[0]), "prod", nil)
	d = w.retrieve(t, "application", versioned.Refs{Artifact: byID(revs[0].ArtifactID)}, "prod", nil)
	assert.Equal(t, "keyed.revision", d.Key, "the key is derived from the slug of the artifact an id names")

	_, err = w.wf.RetrieveByEnvironment(context.Background(), w.sc, "application", versioned.Refs{Artifact: byID(uuid.New())}, envRefs("prod"), nil)
	requireKind(t, err, errs.Invalid, "an artifact id that names nothing derives no key")
	_, err = w.wf.RetrieveByEnvironment(context.Background(), w.sc, "application", versioned.Refs{}, envRefs("prod"), nil)
	requireKind(t, err, errs.Invalid, "no artifact ref and no key")
}

func testRetrieveHistoricEnvironment(t *testing.T, w *world) {
	revs := w.app(t, "hist", `{"h":0}`, `{"h":1}`)
	w.environment(t, "prod")
	w.deploy(t, "application", revRef(revs[0]), "prod", nil) // environment version 1
	w.deploy(t, "application", revRef(revs[1]), "prod", nil) // environment version 2

	one := "1"
	d, err := w.wf.RetrieveByEnvironment(context.Background(), w.sc, "application", versioned.Refs{Artifact: bySlug("hist")},
		versioned.Refs{Artifact: bySlug("prod"), Revision: &versioned.Ref{Version: &one}}, nil)
	require.NoError(t, err)
	assert.Equal(t, revs[0].ID, d.Revision.ID, "what environment version 1 deployed")
	assert.Equal(t, 1, d.Environment.Version)
	assert.Equal(t, revs[1].ID, w.retrieve(t, "application", versioned.Refs{Artifact: bySlug("hist")}, "prod", nil).Revision.ID, "the latest environment revision by default")
}

func testWorkflowReadsApplicationDeploy(t *testing.T, w *world) {
	revs := w.app(t, "shared", `{"s":0}`)
	w.environment(t, "prod")
	w.deploy(t, "application", revRef(revs[0]), "prod", nil)
	d := w.retrieve(t, "workflow", versioned.Refs{Artifact: bySlug("shared")}, "prod", nil)
	assert.Equal(t, revs[0].ID, d.Revision.ID, "applications are workflows too")
	_, err := w.wf.RetrieveByEnvironment(context.Background(), w.sc, "evaluator", versioned.Refs{Artifact: bySlug("shared")}, envRefs("prod"), nil)
	requireKind(t, err, errs.NotFound, "an evaluator retrieve does not read an application deploy")
}

func testDeployAndRetrieveErrors(t *testing.T, w *world) {
	ctx := context.Background()
	revs := w.app(t, "errs", `{"e":0}`)
	w.environment(t, "prod")

	_, err := w.wf.Deploy(ctx, w.sc, "application", versioned.Refs{}, envRefs("prod"), nil, nil)
	requireKind(t, err, errs.Invalid, "deploy without app refs")
	_, err = w.wf.Deploy(ctx, w.sc, "application", revRef(revs[0]), versioned.Refs{}, nil, nil)
	requireKind(t, err, errs.Invalid, "deploy without environment refs")
	_, err = w.wf.Deploy(ctx, w.sc, "application", versioned.Refs{Artifact: bySlug("nothing")}, envRefs("prod"), nil, nil)
	requireKind(t, err, errs.NotFound, "deploy of no revision")
	_, err = w.wf.Deploy(ctx, w.sc, "application", revRef(revs[0]), envRefs("nowhere"), nil, nil)
	requireKind(t, err, errs.NotFound, "deploy to no environment")

	key := "k"
	_, err = w.wf.RetrieveByEnvironment(ctx, w.sc, "application", versioned.Refs{}, versioned.Refs{}, &key)
	requireKind(t, err, errs.Invalid, "a key without environment refs")
	d, err := w.wf.RetrieveByEnvironment(ctx, w.sc, "application", versioned.Refs{Artifact: bySlug("errs")}, versioned.Refs{}, nil)
	require.NoError(t, err)
	assert.Nil(t, d, "no environment refs and no key: not an environment retrieve")
	_, err = w.wf.RetrieveByEnvironment(ctx, w.sc, "application", versioned.Refs{Artifact: bySlug("errs")}, envRefs("nowhere"), nil)
	requireKind(t, err, errs.NotFound, "retrieve from no environment")

	// Refs given with the key must agree with what is deployed there.
	w.deploy(t, "application", revRef(revs[0]), "prod", &key)
	other := w.app(t, "other", `{"o":0}`)
	_, err = w.wf.RetrieveByEnvironment(ctx, w.sc, "application", versioned.Refs{Artifact: byID(other[0].ArtifactID)}, envRefs("prod"), &key)
	requireKind(t, err, errs.Invalid, "an artifact ref that disagrees with the deployed revision")
	v := strconv.Itoa(revs[0].Version + 5)
	_, err = w.wf.RetrieveByEnvironment(ctx, w.sc, "application", versioned.Refs{Revision: &versioned.Ref{Version: &v}, Artifact: bySlug("errs")}, envRefs("prod"), &key)
	requireKind(t, err, errs.Invalid, "a version that disagrees with the deployed revision")
}

func testDeployProjectIsolation(t *testing.T, w *world) {
	ctx := context.Background()
	revs := w.app(t, "mine", `{"m":0}`)
	w.environment(t, "prod")
	w.deploy(t, "application", revRef(revs[0]), "prod", nil)

	other := &world{reg: w.reg, wf: w.wf, sc: scope.Scope{ProjectID: uuid.New()}}
	_, err := other.wf.RetrieveByEnvironment(ctx, other.sc, "application", versioned.Refs{Artifact: bySlug("mine")}, envRefs("prod"), nil)
	requireKind(t, err, errs.NotFound, "another project's environment")
	other.environment(t, "prod")
	_, err = other.wf.Deploy(ctx, other.sc, "application", revRef(revs[0]), envRefs("prod"), nil, nil)
	requireKind(t, err, errs.NotFound, "another project's revision cannot be deployed")
	_, err = other.wf.RetrieveByEnvironment(ctx, other.sc, "application", versioned.Refs{Artifact: bySlug("mine")}, envRefs("prod"), nil)
	requireKind(t, err, errs.NotFound, "the other project's prod deploys nothing")
}

func testCommitBaseRevision(t *testing.T, w *world) {
	ctx := context.Background()
	revs := w.app(t, "based", `{"parameters":{"p":0}}`)
	vid, base := revs[0].VariantID, revs[0].ID
	in := workflows.CommitInput{Key: "workflow", VariantID: vid, Data: workflows.Data{"parameters": map[string]any{"p": 1}}, BaseRevisionID: &base}
	r, noChange, err := w.wf.Commit(ctx, w.sc, in)
	require.NoError(t, err)
	assert.False(t, noChange)
	assert.Equal(t, 1, r.Version)

	in.Data = workflows.Data{"parameters": map[string]any{"p": 2}}
	_, _, err = w.wf.Commit(ctx, w.sc, in)
	requireKind(t, err, errs.Conflict, "the base is no longer the head")
	assert.Equal(t, "workflows.revision_conflict", errs.From(err).Code)
	latest, err := w.reg.LatestRevision(ctx, w.sc, versioned.Workflows, vid)
	require.NoError(t, err)
	assert.Equal(t, r.ID, latest.ID, "the refused commit wrote nothing")
}

func testStrictNoChange(t *testing.T, w *world) {
	ctx := context.Background()
	w.app(t, "strict")
	vid := w.defaultVariant(t, "strict")
	in := workflows.CommitInput{Key: "workflow", VariantID: vid, Strict: true, Data: workflows.Data{"parameters": map[string]any{"p": 1}}}
	first, noChange, err := w.wf.Commit(ctx, w.sc, in)
	require.NoError(t, err)
	assert.False(t, noChange)
	again, noChange, err := w.wf.Commit(ctx, w.sc, in)
	require.NoError(t, err)
	assert.True(t, noChange, "the same data again is no change")
	assert.Equal(t, first.ID, again.ID, "the head is returned")
	latest, err := w.reg.LatestRevision(ctx, w.sc, versioned.Workflows, vid)
	require.NoError(t, err)
	assert.Equal(t, first.ID, latest.ID, "nothing was written")
}

// defaultVariant is the default variant of the workflow slug.
func (w *world) defaultVariant(t *testing.T, slug string) uuid.UUID {
	t.Helper()
	v, err := w.reg.ResolveVariant(context.Background(), w.sc, versioned.Workflows, bySlug(slug), nil)
	require.NoError(t, err)
	require.NotNil(t, v)
	return v.ID
}
