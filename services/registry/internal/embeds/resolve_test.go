package embeds_test

// The embeds resolver through its exported API (Resolve, Options, Info),
// on revisions stored in a real PostgreSQL and found by the lookup the
// registry serves with (workflows.Service.EmbedLookup): nesting, the
// max_depth and max_embeds limits, each error policy, cycles and project
// isolation. A failure here names the resolver; the HTTP tests
// (internal/httpapi/embeds_test.go) check the routes over it.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// world is the registry's services over one database, in one project.
type world struct {
	reg *versioned.Service
	wf  *workflows.Service
	sc  scope.Scope
}

// TestResolve runs each contract on one migrated database (creating one
// costs seconds on a loaded machine), each in a project of its own.
func TestResolve(t *testing.T) {
	reg := versionedtest.New(t)
	cat, err := catalog.New("svc")
	require.NoError(t, err)
	wf := workflows.NewService(reg, environments.NewService(reg), cat, workflows.Config{Provider: "svc"})
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"ObjectFormIsReplacedByTheSelectedValue", testObjectFormIsReplacedByTheSelectedValue},
		{"StringFormIsSplicedIntoItsString", testStringFormIsSplicedIntoItsString},
		{"ReferencesPickARevisionByTheRetrieveRules", testReferencesPickARevisionByTheRetrieveRules},
		{"NestedEmbedsAreExpandedInTurn", testNestedEmbedsAreExpandedInTurn},
		{"MaxDepthStopsNesting", testMaxDepthStopsNesting},
		{"MaxEmbedsBoundsExpansions", testMaxEmbedsBoundsExpansions},
		{"ErrorPoliciesDecideWhatAnErrorDoes", testErrorPoliciesDecideWhatAnErrorDoes},
		{"CyclesAreErrors", testCyclesAreErrors},
		{"RevisionsOfAnotherProjectAreNotFound", testRevisionsOfAnotherProjectAreNotFound},
		{"EnvironmentRefsReadTheDeployedRevision", testEnvironmentRefsReadTheDeployedRevision},
		{"EmptyDataIsReturnedAsItIs", testEmptyDataIsReturnedAsItIs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &world{reg: reg, wf: wf, sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}})
		})
	}
}

// workflow stores a workflow artifact with one variant and a first
// revision of data; its default variant is that variant.
func (w *world) workflow(t *testing.T, slug, data string) *versioned.Revision {
	t.Helper()
	ctx := context.Background()
	a, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Workflows, &versioned.Artifact{Slug: slug})
	require.NoError(t, err)
	v, err := w.reg.CreateVariant(ctx, w.sc, versioned.Workflows, &versioned.Variant{ArtifactID: a.ID, Slug: slug + ".default"})
	require.NoError(t, err)
	return w.commit(t, v.ID, data)
}

// commit stores the next revision of variant v with data.
func (w *world) commit(t *testing.T, v uuid.UUID, data string) *versioned.Revision {
	t.Helper()
	r, err := w.reg.Commit(context.Background(), w.sc, versioned.Workflows, versioned.Commit{Revision: versioned.Revision{VariantID: v, Data: json.RawMessage(data)}})
	require.NoError(t, err)
	return r
}

func (w *world) resolve(t *testing.T, doc string, o embeds.Options) (string, *embeds.Info, error) {
	t.Helper()
	out, info, err := embeds.Resolve(context.Background(), json.RawMessage(doc), nil, w.wf.EmbedLookup(w.sc), o)
	return string(out), info, err
}

// mustResolve resolves under the exception policy and expects no error.
func (w *world) mustResolve(t *testing.T, doc string) (string, *embeds.Info) {
	t.Helper()
	out, info, err := w.resolve(t, doc, embeds.Defaults())
	require.NoError(t, err)
	require.Empty(t, info.Errors)
	return out, info
}

func embedBySlug(slug, path string) string {
	sel := ""
	if path != "" {
		sel = `, "@ag.selector": {"path": "` + path + `"}`
	}
	return `{"@ag.embed": {"@ag.references": {"workflow": {"slug": "` + slug + `"}}` + sel + `}}`
}

func codes(info *embeds.Info) []string {
	out := []string{}
	for _, e := range info.Errors {
		out = append(out, e.Code)
	}
	return out
}

func testObjectFormIsReplacedByTheSelectedValue(t *testing.T, w *world) {
	tone := w.workflow(t, "tone", `{"parameters": {"prompt": "be kind", "temperature": 0.25, "list": [1, {"deep": true}]}}`)

	out, info := w.mustResolve(t, `{"a": `+embedBySlug("tone", "parameters.prompt")+`, "keep": 1}`)
	assert.JSONEq(t, `{"a": "be kind", "keep": 1}`, out)
	assert.Equal(t, 1, info.EmbedsResolved)
	assert.Equal(t, 1, info.DepthReached)
	require.Len(t, info.ReferencesUsed, 1)
	used := info.ReferencesUsed[0]
	assert.Equal(t, tone.ArtifactID, *used["workflow"].ID)
	assert.Equal(t, "tone", *used["workflow"].Slug)
	assert.Equal(t, tone.VariantID, *used["workflow_variant"].ID)
	assert.Equal(t, tone.ID, *used["workflow_revision"].ID)
	assert.Equal(t, "0", *used["workflow_revision"].Version)

	out, _ = w.mustResolve(t, `{"p": `+embedBySlug("tone", "")+`}`)
	assert.JSONEq(t, `{"p": {"parameters": {"prompt": "be kind", "temperature": 0.25, "list": [1, {"deep": true}]}}}`, out, "no path: the whole data, as the compatible platform inserts it")
	out, _ = w.mustResolve(t, `[`+embedBySlug("tone", "parameters.list.1.deep")+`]`)
	assert.JSONEq(t, `[true]`, out, "integer segments index lists")
	out, _ = w.mustResolve(t, `{"t": `+embedBySlug("tone", "parameters.temperature")+`}`)
	assert.Equal(t, `{"t":0.25}`, out, "numbers are kept exactly")

	// One revision embedded twice is listed once in references_used.
	_, info = w.mustResolve(t, `[`+embedBySlug("tone", "parameters.prompt")+`, `+embedBySlug("tone", "parameters.temperature")+`]`)
	assert.Equal(t, 2, info.EmbedsResolved)
	assert.Len(t, info.ReferencesUsed, 1)
}

func testStringFormIsSplicedIntoItsString(t *testing.T, w *world) {
	w.workflow(t, "tone", `{"parameters": {"prompt": "be kind", "obj": {"b": 1, "a": "x"}}}`)
	out, info := w.mustResolve(t, `{"s": "Say: @ag.embed[workflow.slug=tone;path=parameters.prompt]! and @ag.embed[workflow.slug=tone;path=parameters.obj]"}`)
	assert.JSONEq(t, `{"s": "Say: be kind! and {\"a\":\"x\",\"b\":1}"}`, out, "a string as is, anything else as compact JSON")
	assert.Equal(t, 2, info.EmbedsResolved)
}

// testReferencesPickARevisionByTheRetrieveRules: an artifact ref means the
// latest revision of its default variant; a revision version or id picks
// that one; the compatible platform's {slug, version} revision ref names
// the artifact.
func testReferencesPickARevisionByTheRetrieveRules(t *testing.T, w *world) {
	v0 := w.workflow(t, "tone", `{"parameters": {"v": 0}}`)
	v1 := w.commit(t, v0.VariantID, `{"parameters": {"v": 1}}`)
	for _, c := range []struct{ doc, want string }{
		{`"@ag.embed[workflow.slug=tone;path=parameters.v]"`, `"1"`},
		{`"@ag.embed[workflow.slug=tone,workflow_revision.version=0;path=parameters.v]"`, `"0"`},
		{`"@ag.embed[workflow.id=` + v0.ArtifactID.String() + `;path=parameters.v]"`, `"1"`},
		{`"@ag.embed[workflow_revision.id=` + v0.ID.String() + `;path=parameters.v]"`, `"0"`},
		{`"@ag.embed[workflow_variant.slug=tone.default;path=parameters.v]"`, `"1"`},
		{`"@ag.embed[application_revision.slug=tone,application_revision.version=0;path=parameters.v]"`, `"0"`},
		{`"@ag.embed[evaluator_revision.slug=` + v1.Slug + `;path=parameters.v]"`, `"1"`},
	} {
		out, _ := w.mustResolve(t, c.doc)
		assert.Equal(t, c.want, out, c.doc)
	}
}

// chain stores c <- b <- a: each one's parameters.text embeds the next.
func (w *world) chain(t *testing.T) {
	w.workflow(t, "c", `{"parameters": {"text": "end"}}`)
	w.workflow(t, "b", `{"parameters": {"text": "b(@ag.embed[workflow.slug=c;path=parameters.text])"}}`)
	w.workflow(t, "a", `{"parameters": {"text": {"inner": `+embedBySlug("b", "parameters.text")+`}}}`)
}

func testNestedEmbedsAreExpandedInTurn(t *testing.T, w *world) {
	w.chain(t)
	out, info := w.mustResolve(t, `{"doc": `+embedBySlug("a", "parameters.text")+`}`)
	assert.JSONEq(t, `{"doc": {"inner": "b(end)"}}`, out)
	assert.Equal(t, 3, info.DepthReached, "tokens in the document are depth 1, those inside embedded values 2, 3, ...")
	assert.Equal(t, 3, info.EmbedsResolved)
	assert.Len(t, info.ReferencesUsed, 3)
}

func testMaxDepthStopsNesting(t *testing.T, w *world) {
	w.chain(t)
	doc := `{"doc": ` + embedBySlug("a", "parameters.text") + `}`
	out, info, err := w.resolve(t, doc, embeds.Options{MaxDepth: 2, MaxEmbeds: 100, Policy: embeds.Placeholder})
	require.NoError(t, err)
	assert.JSONEq(t, `{"doc": {"inner": "b(<error:max_depth>)"}}`, out)
	assert.Equal(t, []string{"max_depth"}, codes(info))
	assert.Equal(t, "doc > inner > ", info.Errors[0].Path, "the path goes through each token it came through")
	assert.Equal(t, 2, info.DepthReached)

	_, _, err = w.resolve(t, doc, embeds.Options{MaxDepth: 3, MaxEmbeds: 100, Policy: embeds.Exception})
	require.NoError(t, err, "depth 3 is within max_depth 3")
}

func testMaxEmbedsBoundsExpansions(t *testing.T, w *world) {
	w.workflow(t, "x", `{"parameters": {"v": "x"}}`)
	tok := `"@ag.embed[workflow.slug=x;path=parameters.v]"`
	doc := `[` + tok + `, ` + tok + `, ` + tok + `]`
	out, info, err := w.resolve(t, doc, embeds.Options{MaxDepth: 10, MaxEmbeds: 2, Policy: embeds.Keep})
	require.NoError(t, err)
	assert.JSONEq(t, `["x", "x", "@ag.embed[workflow.slug=x;path=parameters.v]"]`, out)
	assert.Equal(t, []string{"max_embeds"}, codes(info))
	assert.Equal(t, "2", info.Errors[0].Path)
	assert.Equal(t, 2, info.EmbedsResolved)

	// Embeds inside embedded values count too.
	w.chain(t)
	_, info, err = w.resolve(t, embedBySlug("a", "parameters.text"), embeds.Options{MaxDepth: 10, MaxEmbeds: 2, Policy: embeds.Placeholder})
	require.NoError(t, err)
	assert.Equal(t, []string{"max_embeds"}, codes(info))
}

// testErrorPoliciesDecideWhatAnErrorDoes: exception fails with a 400 that
// carries the errors; placeholder writes <error:CODE>; keep leaves the
// token. Every error is listed either way.
func testErrorPoliciesDecideWhatAnErrorDoes(t *testing.T, w *world) {
	w.workflow(t, "ok", `{"parameters": {"v": "fine"}}`)
	objMissing := embedBySlug("missing", "")
	doc := `{"a": ` + objMissing + `,
		"b": "x @ag.embed[workflow.slug=ok;path=parameters.nope] y",
		"c": "@ag.embed[nonsense]",
		"d": {"@ag.embed": {"@ag.references": {"dataset": {"slug": "ok"}}}},
		"e": "@ag.embed[workflow.slug=ok;path=parameters.v]"}`
	wantCodes := []string{"not_found", "invalid_selector", "invalid_token", "invalid_token"}

	out, info, err := w.resolve(t, doc, embeds.Options{MaxDepth: 10, MaxEmbeds: 100, Policy: embeds.Placeholder})
	require.NoError(t, err)
	assert.JSONEq(t, `{"a": "<error:not_found>", "b": "x <error:invalid_selector> y", "c": "<error:invalid_token>", "d": "<error:invalid_token>", "e": "fine"}`, out)
	assert.Equal(t, wantCodes, codes(info), "errors in a stable (key) order")
	assert.Equal(t, []string{"a", "b", "c", "d"}, []string{info.Errors[0].Path, info.Errors[1].Path, info.Errors[2].Path, info.Errors[3].Path})

	out, info, err = w.resolve(t, doc, embeds.Options{MaxDepth: 10, MaxEmbeds: 100, Policy: embeds.Keep})
	require.NoError(t, err)
	var kept map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &kept))
	var wantA any
	require.NoError(t, json.Unmarshal([]byte(objMissing), &wantA))
	assert.Equal(t, wantA, kept["a"], "the object token is left as it was")
	assert.Equal(t, "x @ag.embed[workflow.slug=ok;path=parameters.nope] y", kept["b"])
	assert.Equal(t, "@ag.embed[nonsense]", kept["c"])
	assert.Equal(t, "fine", kept["e"], "tokens without error are still expanded")
	assert.Equal(t, wantCodes, codes(info))

	out, info, err = w.resolve(t, doc, embeds.Defaults())
	require.Error(t, err)
	assert.Empty(t, out)
	e := errs.From(err)
	assert.Equal(t, errs.Invalid, e.Kind)
	assert.Equal(t, "embeds.unresolved", e.Code)
	detail, ok := e.Detail.(map[string]any)
	require.True(t, ok, "%T", e.Detail)
	assert.Equal(t, "embed_unresolved", detail["code"])
	listed, ok := detail["errors"].([]embeds.Error)
	require.True(t, ok, "%T", detail["errors"])
	require.Len(t, listed, 1, "the exception policy stops at the first error")
	assert.Equal(t, "not_found", listed[0].Code)
	assert.Equal(t, []string{"not_found"}, codes(info))
}

func testCyclesAreErrors(t *testing.T, w *world) {
	// self embeds itself; ping and pong embed each other.
	self := w.workflow(t, "self", `{"parameters": {"text": "me"}}`)
	self = w.commit(t, self.VariantID, `{"parameters": {"text": "me @ag.embed[workflow.slug=self;path=parameters.text]"}}`)
	w.workflow(t, "ping", `{"parameters": {"text": "ping @ag.embed[workflow.slug=pong;path=parameters.text]"}}`)
	w.workflow(t, "pong", `{"parameters": {"text": "pong @ag.embed[workflow.slug=ping;path=parameters.text]"}}`)
	o := embeds.Options{MaxDepth: 50, MaxEmbeds: 100, Policy: embeds.Placeholder}

	out, info, err := w.resolve(t, `"@ag.embed[workflow.slug=self;path=parameters.text]"`, o)
	require.NoError(t, err)
	assert.Equal(t, `"me \u003cerror:cycle\u003e"`, out)
	assert.Equal(t, []string{"cycle"}, codes(info))

	out, info, err = w.resolve(t, `"@ag.embed[workflow.slug=ping;path=parameters.text]"`, o)
	require.NoError(t, err)
	assert.Equal(t, `"ping pong \u003cerror:cycle\u003e"`, out)
	assert.Equal(t, []string{"cycle"}, codes(info))

	// The document's own revision (self) is on the stack from the start.
	raw, info, err := embeds.Resolve(context.Background(), self.Data, &self.ID, w.wf.EmbedLookup(w.sc), o)
	require.NoError(t, err)
	assert.JSONEq(t, `{"parameters": {"text": "me <error:cycle>"}}`, string(raw))
	assert.Equal(t, []string{"cycle"}, codes(info))

	// The same revision twice side by side is no cycle.
	w.workflow(t, "leaf", `{"parameters": {"v": "l"}}`)
	out, _ = w.mustResolve(t, `"@ag.embed[workflow.slug=leaf;path=parameters.v]@ag.embed[workflow.slug=leaf;path=parameters.v]"`)
	assert.Equal(t, `"ll"`, out)
}

func testRevisionsOfAnotherProjectAreNotFound(t *testing.T, w *world) {
	theirs := w.workflow(t, "secret", `{"parameters": {"v": "theirs"}}`)
	other := &world{reg: w.reg, wf: w.wf, sc: scope.Scope{ProjectID: uuid.New()}}
	o := embeds.Options{MaxDepth: 10, MaxEmbeds: 100, Policy: embeds.Placeholder}
	for _, doc := range []string{
		`"@ag.embed[workflow.slug=secret;path=parameters.v]"`,
		`"@ag.embed[workflow.id=` + theirs.ArtifactID.String() + `;path=parameters.v]"`,
		`"@ag.embed[workflow_variant.id=` + theirs.VariantID.String() + `;path=parameters.v]"`,
		`"@ag.embed[workflow_revision.id=` + theirs.ID.String() + `;path=parameters.v]"`,
	} {
		out, info, err := other.resolve(t, doc, o)
		require.NoError(t, err, doc)
		assert.Equal(t, `"\u003cerror:not_found\u003e"`, out, doc)
		assert.Equal(t, []string{"not_found"}, codes(info), doc)
		assert.Empty(t, info.ReferencesUsed, doc)
	}
	// The owner resolves the same token.
	out, _ := w.mustResolve(t, `"@ag.embed[workflow.slug=secret;path=parameters.v]"`)
	assert.Equal(t, `"theirs"`, out)
}

// testEnvironmentRefsReadTheDeployedRevision: with environment refs the
// token reads what the environment deploys under the key (default
// "<artifact slug>.revision"), not the latest revision.
func testEnvironmentRefsReadTheDeployedRevision(t *testing.T, w *world) {
	ctx := context.Background()
	v0 := w.workflow(t, "tone", `{"parameters": {"v": "deployed"}}`)
	w.commit(t, v0.VariantID, `{"parameters": {"v": "latest"}}`)
	env, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Environments, &versioned.Artifact{Slug: "prod"})
	require.NoError(t, err)
	ev, err := w.reg.CreateVariant(ctx, w.sc, versioned.Environments, &versioned.Variant{ArtifactID: env.ID, Slug: "prod.default"})
	require.NoError(t, err)
	_, err = w.reg.Commit(ctx, w.sc, versioned.Environments, versioned.Commit{Revision: versioned.Revision{VariantID: ev.ID}})
	require.NoError(t, err)
	id := v0.ID
	_, err = w.wf.Deploy(ctx, w.sc, "workflow", versioned.Refs{Revision: &versioned.Ref{ID: &id}}, versioned.Refs{Artifact: &versioned.Ref{ID: &env.ID}}, nil, nil)
	require.NoError(t, err)

	out, info := w.mustResolve(t, `"@ag.embed[workflow.slug=tone,environment.slug=prod;path=parameters.v]"`)
	assert.Equal(t, `"deployed"`, out)
	require.Len(t, info.ReferencesUsed, 1)
	assert.Equal(t, env.ID, *info.ReferencesUsed[0]["environment"].ID)
	assert.Equal(t, "1", *info.ReferencesUsed[0]["environment_revision"].Version, "the environment revision the deploy wrote")

	out, _ = w.mustResolve(t, `{"@ag.embed": {"@ag.references": {"environment": {"slug": "prod"}}, "@ag.selector": {"key": "tone.revision", "path": "parameters.v"}}}`)
	assert.Equal(t, `"deployed"`, out, "an explicit key")

	out, info, err = w.resolve(t, `"@ag.embed[environment.slug=prod;key=nothing.revision;path=parameters.v]"`, embeds.Options{MaxDepth: 10, MaxEmbeds: 10, Policy: embeds.Placeholder})
	require.NoError(t, err)
	assert.Equal(t, `"\u003cerror:not_found\u003e"`, out, "a key the environment does not deploy")
	assert.Equal(t, []string{"not_found"}, codes(info))
}

func testEmptyDataIsReturnedAsItIs(t *testing.T, w *world) {
	for _, doc := range []string{"", "null", "  "} {
		out, info, err := embeds.Resolve(context.Background(), json.RawMessage(doc), nil, w.wf.EmbedLookup(w.sc), embeds.Defaults())
		require.NoError(t, err)
		assert.Equal(t, doc, string(out), fmt.Sprintf("%q", doc))
		assert.Equal(t, 0, info.EmbedsResolved)
		assert.NotNil(t, info.Errors)
		assert.NotNil(t, info.ReferencesUsed)
	}
}
