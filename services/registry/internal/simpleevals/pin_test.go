package simpleevals_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// fixture is a project with a testset, an application, two evaluators and
// two queries, created through the families' own use cases.
type fixture struct {
	fam                      simpleevals.Families
	sc                       scope.Scope
	testset, app             *versioned.Revision
	exact, schemaless        *versioned.Revision
	liveQuery, allQuery      *versioned.Revision
	emptyTestset, noDataCase *versioned.Revision
}

func newFamilies(reg *versioned.Service) simpleevals.Families {
	return simpleevals.Families{
		Testsets:  testsets.NewService(reg, tcfile.Limits{MaxRows: 1000, MaxBytes: 1 << 20}),
		Workflows: workflows.NewService(reg, environments.NewService(reg), catalog.MustNew("svc"), workflows.Config{Provider: "svc", ServicesURL: "http://assay.test/services"}),
		Queries:   queries.NewService(reg, nil),
	}
}

func newFixture(t *testing.T, reg *versioned.Service, sc scope.Scope) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{fam: newFamilies(reg), sc: sc}
	testset := func(slug, rows string) *versioned.Revision {
		var rs []testcases.Row
		require.NoError(t, json.Unmarshal([]byte(rows), &rs))
		rec, err := f.fam.Testsets.CreateSimple(ctx, sc, testsets.SimpleInput{Slug: slug, Rows: rs})
		require.NoError(t, err)
		return rec.Revision
	}
	f.testset = testset("qa", `[{"data":{"question":"2+2","correct_answer":"4"}},{"data":{"question":"3+3","correct_answer":"6"}}]`)
	f.emptyTestset = testset("empty", `[]`)
	f.noDataCase = testset("nodata", `[{"data":{"q":"a"}},{"data":{}}]`)
	wf := func(role, slug, data string) *versioned.Revision {
		rec, err := f.fam.Workflows.Simple(role).Create(ctx, sc, &versioned.Artifact{Slug: slug}, json.RawMessage(data), []any{"body", role, "data"})
		require.NoError(t, err)
		return rec.Revision
	}
	f.app = wf("application", "app", `{"uri":"svc:builtin:completion:v0","parameters":{"prompt":{"messages":[{"role":"user","content":"{{question}}"}]}}}`)
	f.exact = wf("evaluator", "exact", `{"uri":"svc:builtin:auto_exact_match:v0","parameters":{"correct_answer_key":"correct_answer"}}`)
	f.schemaless = wf("evaluator", "hook", `{"uri":"user:custom:hook:v0","url":"http://hook.test/"}`)
	q := func(slug, data string) *versioned.Revision {
		rec, err := f.fam.Queries.Simple().Create(ctx, sc, &versioned.Artifact{Slug: slug}, json.RawMessage(data), []any{"body", "query", "data"})
		require.NoError(t, err)
		return rec.Revision
	}
	f.liveQuery = q("invocations", `{"filtering":{"operator":"and","conditions":[{"field":"trace_type","operator":"is","value":"invocation"}]}}`)
	f.allQuery = q("all", `{"filtering":{"conditions":[{"field":"span_name","operator":"is","value":"x"}]}}`)
	return f
}

func TestParseStepRefs(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	got, err := simpleevals.ParseStepRefs(json.RawMessage(`["`+a.String()+`","`+b.String()+`"]`), "data", "evaluator_steps")
	require.NoError(t, err)
	assert.Equal(t, []simpleevals.StepRef{{RevisionID: a, Origin: "custom"}, {RevisionID: b, Origin: "custom"}}, got, "the list form is custom, as in the reference")

	got, err = simpleevals.ParseStepRefs(json.RawMessage(`{"`+b.String()+`":"auto","`+a.String()+`":"human"}`), "data", "evaluator_steps")
	require.NoError(t, err)
	assert.Equal(t, []simpleevals.StepRef{{RevisionID: b, Origin: "auto"}, {RevisionID: a, Origin: "human"}}, got, "the object form keeps its order")
	assert.JSONEq(t, `{"`+b.String()+`":"auto","`+a.String()+`":"human"}`, string(simpleevals.StepRefsJSON(got)))

	for name, raw := range map[string]string{
		"not a uuid":     `["nope"]`,
		"bad origin":     `{"` + a.String() + `":"robot"}`,
		"origin not str": `{"` + a.String() + `":1}`,
		"twice":          `["` + a.String() + `","` + a.String() + `"]`,
		"scalar":         `"x"`,
		"number in list": `[1]`,
	} {
		_, err := simpleevals.ParseStepRefs(json.RawMessage(raw), "body", "evaluation", "data", "evaluator_steps")
		require.Error(t, err, name)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), name)
		fe := errs.From(err).Detail.([]errs.FieldError)
		assert.Equal(t, []any{"body", "evaluation", "data", "evaluator_steps"}, fe[0].Loc[:4], name)
	}
}

// TestPinResolvesTriplesKeysAndMappings: every step is pinned to its
// artifact, variant and revision with the revision's version, keys and
// mappings are those of a simple evaluation's run, and a later commit
// changes nothing of what was pinned.
func TestPinResolvesTriplesKeysAndMappings(t *testing.T) {
	reg := versionedtestNew(t)
	f := newFixture(t, reg, scopeNew())
	ctx := context.Background()
	p, err := f.fam.Pin(ctx, f.sc, simpleevals.Sources{
		Testsets:     []simpleevals.StepRef{{RevisionID: f.testset.ID, Origin: "custom"}},
		Applications: []simpleevals.StepRef{{RevisionID: f.app.ID, Origin: "auto"}},
		Evaluators:   []simpleevals.StepRef{{RevisionID: f.exact.ID, Origin: "auto"}, {RevisionID: f.schemaless.ID, Origin: "human"}},
	}, false)
	require.NoError(t, err)
	require.Len(t, p.Steps, 4)

	ts := p.Steps[0]
	assert.Equal(t, "testset-"+f.testset.Slug, ts.Key)
	assert.Equal(t, "input", ts.Type)
	assert.Equal(t, f.testset.ID.String(), *ts.References["testset_revision"].ID)
	assert.Equal(t, "1", *ts.References["testset_revision"].Version)
	assert.Equal(t, f.testset.VariantID.String(), *ts.References["testset_variant"].ID)
	assert.Equal(t, "qa", *ts.References["testset"].Slug)

	app := p.Steps[1]
	assert.Equal(t, "application-"+f.app.Slug, app.Key)
	assert.Equal(t, "invocation", app.Type)
	assert.Equal(t, []evaluations.StepInput{{Key: "__all_inputs__"}}, app.Inputs)
	assert.Equal(t, f.app.ID.String(), *app.References["application_revision"].ID)

	ev := p.Steps[2]
	assert.Equal(t, "evaluator-"+f.exact.Slug, ev.Key)
	assert.Equal(t, "annotation", ev.Type)
	assert.Equal(t, "auto", ev.Origin)
	assert.Equal(t, []evaluations.StepInput{{Key: "__all_invocations__"}, {Key: "__all_inputs__"}}, ev.Inputs)
	require.NotNil(t, ev.Schemas)
	assert.Contains(t, string(ev.Schemas.Outputs), `"success"`)
	assert.Equal(t, "human", p.Steps[3].Origin)
	assert.Nil(t, p.Steps[3].Schemas)

	cols := map[string]string{}
	for _, m := range p.Mappings {
		cols[m.Column.Kind+":"+m.Column.Name] = m.Step.Key + "@" + m.Step.Path
	}
	assert.Equal(t, map[string]string{
		"testset:question":       ts.Key + "@data.question",
		"testset:correct_answer": ts.Key + "@data.correct_answer",
		"invocation:outputs":     app.Key + "@attributes.ag.data.outputs",
		"annotation:success":     ev.Key + "@attributes.ag.data.outputs.success",
		"annotation:outputs":     p.Steps[3].Key + "@attributes.ag.data.outputs",
	}, cols)
	assert.Equal(t, "question", p.Mappings[0].Column.Name, "testset columns in the first testcase's key order")
}

// TestPinRefusesWhatCannotRun: each reference at fault is a 4xx naming
// the field and the revision id.
func TestPinRefusesWhatCannotRun(t *testing.T) {
	reg := versionedtestNew(t)
	sc := scopeNew()
	f := newFixture(t, reg, sc)
	other := newFixture(t, reg, scopeNew()) // another project
	ctx := context.Background()
	one := func(id uuid.UUID) []simpleevals.StepRef {
		return []simpleevals.StepRef{{RevisionID: id, Origin: "auto"}}
	}
	for _, tc := range []struct {
		name  string
		src   simpleevals.Sources
		live  bool
		kind  errs.Kind
		field string
		id    uuid.UUID
	}{
		{"unknown testset", simpleevals.Sources{Testsets: one(uuid.New())}, false, errs.NotFound, "data.testset_steps", uuid.Nil},
		{"testset of another project", simpleevals.Sources{Testsets: one(other.testset.ID)}, false, errs.NotFound, "data.testset_steps", other.testset.ID},
		{"application id as a testset", simpleevals.Sources{Testsets: one(f.app.ID)}, false, errs.NotFound, "data.testset_steps", f.app.ID},
		{"evaluator as an application", simpleevals.Sources{Testsets: one(f.testset.ID), Applications: one(f.exact.ID)}, false, errs.NotFound, "data.application_steps", f.exact.ID},
		{"application as an evaluator", simpleevals.Sources{Testsets: one(f.testset.ID), Evaluators: one(f.app.ID)}, false, errs.NotFound, "data.evaluator_steps", f.app.ID},
		{"unknown query", simpleevals.Sources{Queries: one(uuid.New())}, false, errs.NotFound, "data.query_steps", uuid.Nil},
		{"empty testset", simpleevals.Sources{Testsets: one(f.emptyTestset.ID)}, false, errs.Unprocessable, "data.testset_steps", f.emptyTestset.ID},
		{"testcase without data", simpleevals.Sources{Testsets: one(f.noDataCase.ID)}, false, errs.Unprocessable, "data.testset_steps", f.noDataCase.ID},
		{"live query not on invocations", simpleevals.Sources{Queries: one(f.allQuery.ID), Evaluators: one(f.exact.ID)}, true, errs.Unprocessable, "data.query_steps", f.allQuery.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.fam.Pin(ctx, sc, tc.src, tc.live)
			require.Error(t, err)
			assert.Equal(t, tc.kind, errs.KindOf(err))
			d, _ := errs.From(err).Detail.(map[string]any)
			assert.Equal(t, tc.field, d["field"])
			if tc.id != uuid.Nil {
				assert.Equal(t, tc.id.String(), d["revision_id"])
			}
		})
	}
	// The same query is fine for a batch run, and the live one for both.
	_, err := f.fam.Pin(ctx, sc, simpleevals.Sources{Queries: one(f.allQuery.ID), Evaluators: one(f.exact.ID)}, false)
	require.NoError(t, err)
	p, err := f.fam.Pin(ctx, sc, simpleevals.Sources{Queries: one(f.liveQuery.ID), Evaluators: one(f.exact.ID)}, true)
	require.NoError(t, err)
	assert.Equal(t, "query-"+f.liveQuery.Slug, p.Steps[0].Key)
	assert.Equal(t, evaluations.Mapping{Column: evaluations.MappingColumn{Kind: "query", Name: "data"},
		Step: evaluations.MappingStep{Key: p.Steps[0].Key, Path: "attributes.ag.data"}}, p.Mappings[0])
	assert.Equal(t, []evaluations.StepInput{{Key: "__all_inputs__"}}, p.Steps[1].Inputs, "no application: evaluators read the inputs only")
}

func TestEvaluatorMappingsPerLeaf(t *testing.T) {
	ms := simpleevals.EvaluatorMappings("evaluator-x", json.RawMessage(`{"type":"object","properties":{"score":{"type":"number"},"detail":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}}},"free":{"type":"object"}}}`))
	var paths []string
	for _, m := range ms {
		paths = append(paths, m.Column.Name+"="+m.Step.Path)
	}
	assert.Equal(t, []string{"score=attributes.ag.data.outputs.score", "detail.a=attributes.ag.data.outputs.detail.a",
		"detail.b=attributes.ag.data.outputs.detail.b", "free=attributes.ag.data.outputs.free"}, paths)
	assert.Equal(t, "outputs", simpleevals.EvaluatorMappings("k", json.RawMessage(`{"type":"object"}`))[0].Column.Name)
}
