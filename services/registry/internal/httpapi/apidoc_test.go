package httpapi

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// The registry reads bodies field by field (wire.Body) and renders through wire.Obj,
// so its wire shapes have no Go struct of their own; they depend on the
// family's keys ("testset_variant", "workflow_revision", ...). The schemas
// below are still generated from Go types, with the keys taken from the
// same kind values the routes use (testsetKind, workflowKind, ...).

type obj2 = map[string]any

func headerFields() []apidoc.Field {
	return []apidoc.Field{
		{Name: "name", Value: ""}, {Name: "description", Value: ""},
		{Name: "flags", Value: obj2{}, Doc: "Booleans, e.g. is_evaluator."},
		{Name: "tags", Value: obj2{}}, {Name: "meta", Value: obj2{}},
	}
}

func lifecycleFields() []apidoc.Field {
	return []apidoc.Field{
		{Name: "created_at", Value: time.Time{}}, {Name: "updated_at", Value: time.Time{}}, {Name: "deleted_at", Value: time.Time{}, Doc: "Set while archived."},
		{Name: "created_by_id", Value: uuid.UUID{}}, {Name: "updated_by_id", Value: uuid.UUID{}}, {Name: "deleted_by_id", Value: uuid.UUID{}},
	}
}

func cat(parts ...[]apidoc.Field) []apidoc.Field {
	var out []apidoc.Field
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ids adds the family's id (and slug) aliases: <key>_<suffix>, and for
// generic families artifact_/variant_ ones, and the alias family's.
func ids(k kind, suffixes ...string) []apidoc.Field {
	var out []apidoc.Field
	for _, s := range suffixes {
		var v any = uuid.UUID{}
		if strings.HasSuffix(s, "slug") {
			v = ""
		}
		out = append(out, apidoc.Field{Name: k.Key + "_" + s, Value: v})
		if k.Generic { // artifact_id, artifact_slug, variant_id
			g := "artifact_" + s
			if strings.HasPrefix(s, "variant_") {
				g = s
			}
			out = append(out, apidoc.Field{Name: g, Value: v})
		}
		if k.Alias != "" {
			out = append(out, apidoc.Field{Name: k.Alias + "_" + s, Value: v})
		}
	}
	return out
}

func idSlug() []apidoc.Field {
	return []apidoc.Field{{Name: "id", Value: uuid.UUID{}}, {Name: "slug", Value: ""}}
}

func title(key string) string { return strings.ToUpper(key[:1]) + key[1:] }

func artifactOut(k kind) any {
	return apidoc.Named("Artifact", apidoc.Envelope(cat(idSlug(), headerFields(), []apidoc.Field{{Name: "folder_id", Value: uuid.UUID{}}}, lifecycleFields())...))
}

func variantOut(k kind) any {
	return apidoc.Named(title(k.Key)+"Variant", apidoc.Envelope(cat(idSlug(), ids(k, "id", "slug"), headerFields(), lifecycleFields())...))
}

func revisionOut(k kind) any {
	f := cat(idSlug(), []apidoc.Field{{Name: "version", Value: "", Doc: "1, 2, ... as a string."}},
		[]apidoc.Field{{Name: k.Key + "_id", Value: uuid.UUID{}}, {Name: k.Key + "_variant_id", Value: uuid.UUID{}},
			{Name: k.Key + "_slug", Value: ""}, {Name: k.Key + "_variant_slug", Value: ""}})
	if k.Generic {
		f = append(f, apidoc.Field{Name: "artifact_id", Value: uuid.UUID{}}, apidoc.Field{Name: "variant_id", Value: uuid.UUID{}},
			apidoc.Field{Name: "artifact_slug", Value: ""}, apidoc.Field{Name: "variant_slug", Value: ""})
	}
	if k.Alias != "" { // workflow_* beside application_* and evaluator_*
		f = append(f, apidoc.Field{Name: k.Alias + "_id", Value: uuid.UUID{}}, apidoc.Field{Name: k.Alias + "_variant_id", Value: uuid.UUID{}},
			apidoc.Field{Name: k.Alias + "_slug", Value: ""}, apidoc.Field{Name: k.Alias + "_variant_slug", Value: ""})
	}
	f = cat(f, headerFields(), []apidoc.Field{{Name: "message", Value: ""}, {Name: "author", Value: uuid.UUID{}}, {Name: "date", Value: time.Time{}},
		{Name: "data", Value: obj2{}, Doc: "The revision's content: testcases for testsets, the workflow's uri, url, schemas and parameters for workflows."}}, lifecycleFields())
	return apidoc.Named(title(k.Key)+"Revision", apidoc.Envelope(f...))
}

func one(key string, item any) any {
	return apidoc.Envelope(apidoc.Field{Name: "count", Value: 0, Doc: "1, or 0 when nothing matched (then the item is absent)."}, apidoc.Field{Name: key, Value: item})
}

// manyOf is a list envelope: {count, <key>: [item], windowing?}.
func manyOf(key string, item any) any {
	return apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: key, Value: sliceOf(item)},
		apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}, Doc: "Present when a limit was asked and the page is full: resend it for the next page."})
}

func sliceOf(item any) any {
	return reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(item)), 0, 0).Interface()
}

func filterIn() any {
	return apidoc.Named("HeaderFilter", apidoc.Envelope(cat(headerFields(), []apidoc.Field{{Name: "slug", Value: ""}, {Name: "slugs", Value: []string{}},
		{Name: "message", Value: ""}, {Name: "author", Value: uuid.UUID{}}, {Name: "authors", Value: []uuid.UUID{}},
		{Name: "date", Value: time.Time{}}, {Name: "dates", Value: []time.Time{}}, {Name: "folder_id", Value: uuid.UUID{}}})...))
}

func queryIn(k kind, level string) any {
	return apidoc.Envelope(apidoc.Field{Name: level, Value: filterIn(), Doc: "Filter on the header."},
		apidoc.Field{Name: k.Key + "_refs", Value: []versioned.Ref{}}, apidoc.Field{Name: k.Key + "_variant_refs", Value: []versioned.Ref{}},
		apidoc.Field{Name: k.Key + "_revision_refs", Value: []versioned.Ref{}},
		apidoc.Field{Name: "include_archived", Value: false}, apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})
}

func artifactIn() any {
	return apidoc.Envelope(cat(idSlug(), headerFields(), []apidoc.Field{{Name: "folder_id", Value: uuid.UUID{}}})...)
}

func variantIn(k kind) any {
	return apidoc.Envelope(cat(idSlug(), ids(k, "id"), headerFields())...)
}

func revisionIn() any {
	return apidoc.Envelope(cat([]apidoc.Field{{Name: "id", Value: uuid.UUID{}}}, headerFields())...)
}

// gitBindings are the routes git.route registers for one family.
func gitBindings(k kind) []apidoc.Binding {
	p := "/api/" + k.Plural
	vk, rk := k.Key+"_variant", k.Key+"_revision"
	art, vr, rev := artifactOut(k), variantOut(k), revisionOut(k)
	wrap := func(key string, v any) any { return apidoc.Envelope(apidoc.Field{Name: key, Value: v}) }
	return []apidoc.Binding{
		{Method: "POST", Path: p, Request: wrap(k.Key, artifactIn()), Response: one(k.Key, art)},
		{Method: "GET", Path: p + "/{id}", Response: one(k.Key, art)},
		{Method: "PUT", Path: p + "/{id}", Request: wrap(k.Key, artifactIn()), Response: one(k.Key, art)},
		{Method: "POST", Path: p + "/{id}/archive", Response: one(k.Key, art)},
		{Method: "POST", Path: p + "/{id}/unarchive", Response: one(k.Key, art)},
		{Method: "POST", Path: p + "/query", Request: queryIn(k, k.Key), Response: manyOf(k.Plural, art)},
		{Method: "POST", Path: p + "/variants", Request: wrap(vk, variantIn(k)), Response: one(vk, vr)},
		{Method: "GET", Path: p + "/variants/{id}", Response: one(vk, vr)},
		{Method: "PUT", Path: p + "/variants/{id}", Request: wrap(vk, variantIn(k)), Response: one(vk, vr)},
		{Method: "POST", Path: p + "/variants/{id}/archive", Response: one(vk, vr)},
		{Method: "POST", Path: p + "/variants/{id}/unarchive", Response: one(vk, vr)},
		{Method: "POST", Path: p + "/variants/query", Request: queryIn(k, vk), Response: manyOf(vk+"s", vr)},
		{Method: "POST", Path: p + "/variants/fork", Request: apidoc.Envelope(apidoc.Field{Name: vk, Value: variantIn(k)},
			apidoc.Field{Name: vk + "_ref", Value: versioned.Ref{}, Doc: "The variant to fork."},
			apidoc.Field{Name: rk + "_ref", Value: versioned.Ref{}, Doc: "Fork up to this revision (default: the latest)."}), Response: one(vk, vr)},
		{Method: "GET", Path: p + "/revisions/{id}", Response: one(rk, rev)},
		{Method: "PUT", Path: p + "/revisions/{id}", Request: wrap(rk, revisionIn()), Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/{id}/archive", Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/{id}/unarchive", Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/query", Request: queryIn(k, rk), Response: manyOf(rk+"s", rev)},
		{Method: "POST", Path: p + "/revisions/log", Request: wrap(rk+"s", apidoc.Envelope(
			apidoc.Field{Name: k.Key + "_id", Value: uuid.UUID{}}, apidoc.Field{Name: k.Key + "_variant_id", Value: uuid.UUID{}},
			apidoc.Field{Name: k.Key + "_revision_id", Value: uuid.UUID{}}, apidoc.Field{Name: "depth", Value: 0})), Response: manyOf(rk+"s", rev)},
	}
}

// docWorkflowData documents a workflow revision's data, which the handlers
// keep as workflows.Data (a map) limited to these keys.
type docWorkflowData struct {
	URI        string         `json:"uri,omitempty" doc:"What runs it: agenta:builtin:<key>:v0 for catalog evaluators, or a user URI." example:"agenta:builtin:auto_exact_match:v0"`
	URL        string         `json:"url,omitempty" doc:"An HTTP endpoint that serves the workflow."`
	Headers    map[string]any `json:"headers,omitempty"`
	Runtime    string         `json:"runtime,omitempty" example:"python"`
	Script     string         `json:"script,omitempty"`
	Schemas    *docSchemas    `json:"schemas,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty" doc:"Checked against schemas.parameters (or the catalog template's) on commit."`
	ModelCache *bool          `json:"model_cache,omitempty" doc:"false: in evaluation runs, this revision's model calls are never answered from the model-call cache."`
}

type docSchemas struct {
	Parameters map[string]any `json:"parameters,omitempty" doc:"JSON Schema."`
	Inputs     map[string]any `json:"inputs,omitempty" doc:"JSON Schema."`
	Outputs    map[string]any `json:"outputs,omitempty" doc:"JSON Schema."`
}

// workflowBindings are the revision routes only the workflow families have.
func workflowBindings(k kind) []apidoc.Binding {
	p := "/api/" + k.Plural
	rk := k.Key + "_revision"
	rev := revisionOut(k)
	target := cat([]apidoc.Field{{Name: "slug", Value: ""}}, headerFields(), ids(k, "variant_id", "id"))
	refs := []apidoc.Field{{Name: k.Key + "_ref", Value: &versioned.Ref{}}, {Name: k.Key + "_variant_ref", Value: &versioned.Ref{}},
		{Name: k.Key + "_revision_ref", Value: &versioned.Ref{}, Doc: "{slug, version} names that version of the artifact."},
		{Name: "environment_ref", Value: &versioned.Ref{}}, {Name: "environment_variant_ref", Value: &versioned.Ref{}},
		{Name: "environment_revision_ref", Value: &versioned.Ref{}}, {Name: "key", Value: "", Doc: "The deployment key in the environment."}}
	resolveOpts := []apidoc.Field{{Name: "max_depth", Value: 0}, {Name: "max_embeds", Value: 0},
		{Name: "error_policy", Value: "", Doc: "exception, placeholder (<error:CODE>) or keep."}}
	retrieved := apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: rk, Value: rev},
		apidoc.Field{Name: "resolution_info", Value: obj2{}, Doc: "With resolve: what was embedded."},
		apidoc.Field{Name: "environment", Value: obj2{}}, apidoc.Field{Name: "environment_variant", Value: obj2{}},
		apidoc.Field{Name: "environment_revision", Value: obj2{}}, apidoc.Field{Name: "references", Value: obj2{}})
	commit := apidoc.Envelope(cat(target, []apidoc.Field{{Name: "message", Value: ""},
		{Name: "base_revision_id", Value: uuid.UUID{}}, {Name: "data", Value: docWorkflowData{}, Doc: "The whole new data; exclusive with delta."},
		{Name: "delta", Value: docWorkflowDelta{}, Doc: "Changes to the head's data; exclusive with data."}})...)
	committed := apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: rk, Value: rev},
		apidoc.Field{Name: "status", Value: "", Doc: "workflows only: committed or no_change."},
		apidoc.Field{Name: "warnings", Value: []map[string]string{}})
	return []apidoc.Binding{
		{Method: "POST", Path: p + "/revisions", Request: apidoc.Envelope(apidoc.Field{Name: rk, Value: apidoc.Envelope(target...)}), Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/commit", Request: apidoc.Envelope(apidoc.Field{Name: rk, Value: commit, Doc: "Also accepted as " + rk + "_commit."}), Response: committed},
		{Method: "POST", Path: p + "/revisions/retrieve", Request: apidoc.Envelope(cat(refs, resolveOpts, []apidoc.Field{{Name: "resolve", Value: false}})...), Response: retrieved},
		{Method: "POST", Path: p + "/revisions/resolve", Request: apidoc.Envelope(cat(refs, resolveOpts, []apidoc.Field{{Name: rk, Value: commit, Doc: "An inline revision to resolve instead of a stored one."}})...), Response: retrieved},
		{Method: "POST", Path: p + "/revisions/deploy", Request: apidoc.Envelope(cat(refs, []apidoc.Field{{Name: "message", Value: ""}})...), Response: one(rk, rev)},
	}
}

// docTestcase is a testcase as testsets.go's testcase renderer writes it.
type docTestcase struct {
	ID          uuid.UUID      `json:"id"`
	TestsetID   *uuid.UUID     `json:"testset_id,omitempty"`
	SetID       *uuid.UUID     `json:"set_id,omitempty" doc:"The testset id again, on the /testcases routes."`
	Data        map[string]any `json:"data" doc:"The row: column name to value." example:"{\"country\": \"France\", \"correct_answer\": \"Paris\"}"`
	Flags       map[string]any `json:"flags,omitempty"`
	Tags        map[string]any `json:"tags,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	CreatedByID *uuid.UUID     `json:"created_by_id,omitempty"`
}

// docTestsetData is a testset revision's data.
type docTestsetData struct {
	TestcaseIDs []uuid.UUID   `json:"testcase_ids,omitempty"`
	Testcases   []docTestcase `json:"testcases,omitempty"`
}

// simpleRecord is simpleAPI.record's shape.
func simpleRecord(data any, dataDoc string) any {
	name := "Simple" + strings.TrimSuffix(apidoc.ComponentName(reflect.TypeOf(data)), "Data") // SimpleWorkflow, ...
	return apidoc.Named(name, apidoc.Envelope(cat(idSlug(), headerFields(), lifecycleFields(), []apidoc.Field{
		{Name: "data", Value: data, Doc: dataDoc}, {Name: "variant_id", Value: uuid.UUID{}}, {Name: "revision_id", Value: uuid.UUID{}}})...))
}

// catalogBindings are the catalog routes a workflow family serves; which
// of them a family has is read from the fragment (the routes test keeps
// that in step with the code).
func catalogBindings(t *testing.T, plural string, documented map[string]bool) []apidoc.Binding {
	p := "/api/" + plural + "/catalog"
	all := []apidoc.Binding{
		{Method: "GET", Path: p + "/types", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "types", Value: []catalog.Type{}})},
		{Method: "GET", Path: p + "/types/{key}", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "type", Value: &catalog.Type{}})},
		{Method: "GET", Path: p + "/templates", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "templates", Value: []catalog.Template{}})},
		{Method: "GET", Path: p + "/templates/{key}", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "template", Value: &catalog.Template{}})},
		{Method: "GET", Path: p + "/templates/{key}/presets", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "presets", Value: []catalog.Template{}})},
		{Method: "GET", Path: p + "/templates/{key}/presets/{preset}", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "preset", Value: &catalog.Template{}})},
		{Method: "GET", Path: p + "/harnesses", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "harnesses", Value: []catalog.Harness{}})},
		{Method: "GET", Path: p + "/harnesses/{key}", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "harness", Value: &catalog.Harness{}})},
	}
	var out []apidoc.Binding
	for _, b := range all {
		if documented[b.Key()] {
			out = append(out, b)
		}
	}
	if len(out) < 5 {
		t.Fatalf("%s: only %d catalog routes documented", plural, len(out))
	}
	return out
}

// simpleBindings are the /simple/<plural> routes of simpleAPI.route and of
// the testsets' simple surface, which answer the same record shape.
func simpleBindings(k kind, data any, dataDoc string) []apidoc.Binding {
	p := "/api/simple/" + k.Plural
	rec := simpleRecord(data, dataDoc)
	in := apidoc.Envelope(apidoc.Field{Name: k.Key, Value: apidoc.Envelope(cat(idSlug(), headerFields(), []apidoc.Field{
		{Name: "data", Value: data, Doc: dataDoc}, {Name: "message", Value: ""}})...)})
	query := apidoc.Envelope(apidoc.Field{Name: k.Key, Value: filterIn(), Doc: "Filter on the header."},
		apidoc.Field{Name: k.Key + "_refs", Value: []versioned.Ref{}}, apidoc.Field{Name: "include_archived", Value: false},
		apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})
	return []apidoc.Binding{
		{Method: "POST", Path: p, Request: in, Response: one(k.Key, rec)},
		{Method: "GET", Path: p + "/{id}", Response: one(k.Key, rec)},
		{Method: "PUT", Path: p + "/{id}", Request: in, Response: one(k.Key, rec)},
		{Method: "POST", Path: p + "/{id}/archive", Response: one(k.Key, rec)},
		{Method: "POST", Path: p + "/{id}/unarchive", Response: one(k.Key, rec)},
		{Method: "POST", Path: p + "/query", Request: query, Response: manyOf(k.Plural, rec)},
	}
}

// testsetRevisionBindings are testsets.go's own revision routes.
func testsetRevisionBindings() []apidoc.Binding {
	k := testsetKind
	rev := revisionOut(k)
	target := cat([]apidoc.Field{{Name: "slug", Value: ""}, {Name: "testset_id", Value: uuid.UUID{}, Doc: "Also accepted as artifact_id."},
		{Name: "testset_variant_id", Value: uuid.UUID{}, Doc: "Also accepted as variant_id."}}, headerFields())
	commit := apidoc.Envelope(cat(target, []apidoc.Field{{Name: "message", Value: ""},
		{Name: "testset_revision_id", Value: uuid.UUID{}, Doc: "The base revision; also accepted as revision_id."},
		{Name: "data", Value: docTestsetData{}, Doc: "The whole new content; exclusive with delta."},
		{Name: "delta", Value: obj2{}, Doc: "Row changes against the base revision; exclusive with data."}})...)
	return []apidoc.Binding{
		{Method: "POST", Path: "/api/testsets/revisions", Request: apidoc.Envelope(apidoc.Field{Name: "testset_revision", Value: apidoc.Envelope(target...)}), Response: one("testset_revision", rev)},
		{Method: "POST", Path: "/api/testsets/revisions/commit", Request: apidoc.Envelope(apidoc.Field{Name: "testset_revision", Value: commit, Doc: "Also accepted as testset_revision_commit."}), Response: one("testset_revision", rev)},
		{Method: "POST", Path: "/api/testsets/revisions/retrieve", Request: apidoc.Envelope(apidoc.Field{Name: "testset_ref", Value: &versioned.Ref{}},
			apidoc.Field{Name: "testset_variant_ref", Value: &versioned.Ref{}}, apidoc.Field{Name: "testset_revision_ref", Value: &versioned.Ref{}},
			apidoc.Field{Name: "include_testcases", Value: false, Doc: "Default true."}, apidoc.Field{Name: "include_testcase_ids", Value: false, Doc: "Default true."},
			apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}, Doc: "Pages the testcases."}), Response: one("testset_revision", rev)},
	}
}

// Defined types over the real structs: same fields and tags, but a schema
// name that says whose Data or Delta it is.
type (
	docWorkflowDelta    workflows.Delta
	docEnvironmentData  environments.Data
	docEnvironmentDelta environments.Delta
	docQueryData        queries.Data
)

// revisionBindings are the revision routes environments.go and queries.go
// add beside git.route: create, commit, retrieve (and environments' resolve).
func revisionBindings(k kind, data, delta any, retrieveExtra ...apidoc.Field) []apidoc.Binding {
	p := "/api/" + k.Plural
	rk := k.Key + "_revision"
	rev := revisionOut(k)
	target := cat([]apidoc.Field{{Name: "slug", Value: ""}}, ids(k, "variant_id", "id"), headerFields())
	commitFields := cat(target, []apidoc.Field{{Name: "message", Value: ""}, {Name: "data", Value: data}})
	if delta != nil {
		commitFields = append(commitFields, apidoc.Field{Name: "delta", Value: delta, Doc: "Exclusive with data."})
	}
	retrieve := apidoc.Envelope(cat([]apidoc.Field{{Name: k.Key + "_ref", Value: &versioned.Ref{}}, {Name: k.Key + "_variant_ref", Value: &versioned.Ref{}},
		{Name: k.Key + "_revision_ref", Value: &versioned.Ref{}}}, retrieveExtra)...)
	b := []apidoc.Binding{
		{Method: "POST", Path: p + "/revisions", Request: apidoc.Envelope(apidoc.Field{Name: rk, Value: apidoc.Envelope(target...)}), Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/commit", Request: apidoc.Envelope(apidoc.Field{Name: rk, Value: apidoc.Envelope(commitFields...), Doc: "Also accepted as " + rk + "_commit."}), Response: one(rk, rev)},
		{Method: "POST", Path: p + "/revisions/retrieve", Request: retrieve, Response: one(rk, rev)},
	}
	if k.Key == "environment" {
		b = append(b, apidoc.Binding{Method: "POST", Path: p + "/revisions/resolve", Request: retrieve, Response: one(rk, rev)})
	}
	return b
}

func registryBindings(t *testing.T) []apidoc.Binding {
	ops, err := apidoc.Operations("registry")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, op := range ops {
		documented[op.Method+" "+op.Path] = true
	}
	var b []apidoc.Binding
	for _, k := range []kind{testsetKind, environmentKind, queryKind} {
		b = append(b, gitBindings(k)...)
	}
	b = append(b, simpleBindings(testsetKind, docTestsetData{}, "The testcases.")...)
	b = append(b, testsetRevisionBindings()...)
	resolveOpts := []apidoc.Field{{Name: "resolve", Value: false}, {Name: "max_depth", Value: 0}, {Name: "max_embeds", Value: 0},
		{Name: "error_policy", Value: "", Doc: "exception, placeholder (<error:CODE>) or keep."}}
	b = append(b, revisionBindings(environmentKind, docEnvironmentData{}, docEnvironmentDelta{}, resolveOpts...)...)
	b = append(b, revisionBindings(queryKind, docQueryData{}, nil, apidoc.Field{Name: "include_trace_ids", Value: false},
		apidoc.Field{Name: "include_traces", Value: false}, apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})...)
	b = append(b, simpleBindings(environmentKind, docEnvironmentData{}, "What is deployed, by key.")...)
	guarded := one("environment", simpleRecord(docEnvironmentData{}, "What is deployed, by key."))
	tcOne := apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "testcase", Value: &docTestcase{}})
	tcMany := apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "testcases", Value: []docTestcase{}},
		apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}, Doc: "Present when more pages follow."})
	b = append(b,
		apidoc.Binding{Method: "POST", Path: "/api/simple/environments/{id}/guard", Response: guarded},
		apidoc.Binding{Method: "POST", Path: "/api/simple/environments/{id}/unguard", Response: guarded},
		apidoc.Binding{Method: "GET", Path: "/api/simple/evaluators/templates", Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "templates", Value: []catalog.LegacyTemplate{}})},
		apidoc.Binding{Method: "GET", Path: "/api/testcases", Response: tcMany},
		apidoc.Binding{Method: "GET", Path: "/api/testcases/{id}", Response: tcOne},
		apidoc.Binding{Method: "POST", Path: "/api/testcases/query", Response: tcMany, Request: apidoc.Envelope(
			apidoc.Field{Name: "testcase_ids", Value: []uuid.UUID{}}, apidoc.Field{Name: "testset_id", Value: uuid.UUID{}},
			apidoc.Field{Name: "testset_ref", Value: &versioned.Ref{}}, apidoc.Field{Name: "testset_variant_ref", Value: &versioned.Ref{}},
			apidoc.Field{Name: "testset_revision_ref", Value: &versioned.Ref{}}, apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})})
	b = append(b, simpleBindings(queryKind, docQueryData{}, "The saved query.")...)
	for _, r := range [][2]string{{"workflow", "workflows"}, {"application", "applications"}, {"evaluator", "evaluators"}} {
		k := workflowKind(r[0], r[1])
		b = append(b, gitBindings(k)...)
		b = append(b, workflowBindings(k)...)
		b = append(b, simpleBindings(k, docWorkflowData{}, "The workflow's data.")...)
		b = append(b, catalogBindings(t, k.Plural, documented)...)
	}
	b = append(b, secretBindings()...)
	b = append(b, evaluationBindings()...)
	b = append(b, configBindings()...)
	b = append(b, simpleEvaluationBindings()...)
	b = append(b, modelCallBindings()...)
	b = append(b, apidoc.Binding{Method: "POST", Path: "/api/evaluations/runs/compare",
		Request:  apidoc.Envelope(apidoc.Field{Name: "run_ids", Value: []uuid.UUID{}, Doc: "2 to 10 runs over one testset revision; the first is the baseline."}),
		Response: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0}, apidoc.Field{Name: "comparison", Value: &evalreports.Comparison{}})})
	return b
}

// TestOpenAPITypes keeps pkg/apidoc/registry.types.json generated from the
// table above; UPDATE_APIDOC=1 regenerates it.
func TestOpenAPITypes(t *testing.T) {
	require.NoError(t, apidoc.CheckTypes("registry", registryBindings(t), os.Getenv("UPDATE_APIDOC") == "1"))
}
