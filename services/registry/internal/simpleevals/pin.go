package simpleevals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// StepRef is one entry of a simple evaluation's *_steps: the revision it
// names and the step's origin.
type StepRef struct {
	RevisionID uuid.UUID
	Origin     string
}

// The *_steps fields of a simple evaluation, in the order a run's steps
// are built: sources, then the application, then the evaluators.
const (
	QuerySteps       = "query_steps"
	TestsetSteps     = "testset_steps"
	ApplicationSteps = "application_steps"
	EvaluatorSteps   = "evaluator_steps"
)

// ParseStepRefs reads a *_steps value: a list of revision ids (every step
// gets origin custom, as in the compatible platform: a list-form evaluator is never
// run) or an object {revision_id: origin}, whose key order is the step
// order. Errors are 422s at loc.
func ParseStepRefs(raw json.RawMessage, loc ...any) ([]StepRef, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var out []StepRef
	seen := map[uuid.UUID]bool{}
	add := func(id string, origin string, where []any) error {
		u, err := uuid.Parse(id)
		if err != nil {
			return errs.Field("Input should be a valid UUID", id, where...)
		}
		switch origin {
		case evaluations.OriginAuto, evaluations.OriginHuman, evaluations.OriginCustom:
		default:
			return errs.Field("Input should be 'auto', 'human' or 'custom'", origin, where...)
		}
		if seen[u] {
			return errs.Field("The revision is listed twice", id, where...)
		}
		seen[u] = true
		out = append(out, StepRef{RevisionID: u, Origin: origin})
		return nil
	}
	switch raw[0] {
	case '[':
		var ids []json.RawMessage
		if err := json.Unmarshal(raw, &ids); err != nil {
			return nil, errs.Field("Input should be a list of revision ids or an object {revision_id: origin}", raw, loc...)
		}
		for i, v := range ids {
			var id string
			if json.Unmarshal(v, &id) != nil {
				return nil, errs.Field("Input should be a valid UUID", v, at(i)...)
			}
			if err := add(id, evaluations.OriginCustom, at(i)); err != nil {
				return nil, err
			}
		}
	case '{':
		// Decoded token by token: a map would lose the step order.
		d := json.NewDecoder(bytes.NewReader(raw))
		_, _ = d.Token()
		for d.More() {
			tk, err := d.Token()
			if err != nil {
				return nil, errs.Field("Input should be a valid dictionary", raw, loc...)
			}
			id, _ := tk.(string)
			var origin string
			if err := d.Decode(&origin); err != nil {
				return nil, errs.Field("Input should be 'auto', 'human' or 'custom'", nil, at(id)...)
			}
			if err := add(id, origin, at(id)); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errs.Field("Input should be a list of revision ids or an object {revision_id: origin}", raw, loc...)
	}
	return out, nil
}

// StepRefsJSON renders refs the way fetch answers them: {revision_id: origin}
// in step order.
func StepRefsJSON(refs []StepRef) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range refs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%q", r.RevisionID.String(), r.Origin)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Families resolves step references through the registry's own family
// services.
type Families struct {
	Testsets  *testsets.Service
	Workflows *workflows.Service
	Queries   *queries.Service
}

// Sources are a simple evaluation's steps by kind, as sent.
type Sources struct {
	Queries, Testsets, Applications, Evaluators []StepRef
}

// Pinned is a resolved configuration: the run's steps and mappings.
type Pinned struct {
	Steps    []evaluations.Step
	Mappings []evaluations.Mapping
}

// ErrUnresolved is the 404 of a step naming a revision that does not exist
// in the caller's project (or is not of the step's kind): the compatible platform
// answers 200 {count: 0}, which tells the client nothing.
func ErrUnresolved(field string, id uuid.UUID, what string) error {
	return errs.Message(errs.NotFound, "evaluations.unresolved_step",
		fmt.Sprintf("%s revision '%s' (data.%s) was not found in this project.", what, id, field),
		map[string]any{"field": "data." + field, "revision_id": id.String()})
}

// errUnusable is the 422 of a step whose revision exists but cannot be
// run (an empty testset, a testcase without data, a live query that does
// not select invocations).
func errUnusable(field string, id uuid.UUID, msg string) error {
	return errs.Message(errs.Unprocessable, "evaluations.unusable_step", msg,
		map[string]any{"field": "data." + field, "revision_id": id.String()})
}

// Pin resolves every step to its artifact, variant and revision, builds the
// step keys and mappings a simple evaluation's run gets (the compatible
// platform's: keys from the slugs, a mapping per testset column and evaluator
// output), and checks what the steps need: testcases with data, and for a live
// run a query that keeps to invocations. The first reference at fault is the
// error.
func (f Families) Pin(ctx context.Context, sc scope.Scope, src Sources, live bool) (*Pinned, error) {
	p := &Pinned{}
	var sourceKeys []string
	for _, s := range src.Queries {
		r, err := f.Queries.Retrieve(ctx, sc, revRefs(s.RevisionID), queries.Include{})
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, ErrUnresolved(QuerySteps, s.RevisionID, "Query")
		}
		if live && !selectsInvocations(r.Data) {
			return nil, errUnusable(QuerySteps, s.RevisionID, fmt.Sprintf(
				"A live evaluation needs its query (revision '%s') to filter on trace_type is invocation at the top level.", s.RevisionID))
		}
		key := "query-" + r.Slug
		p.Steps = append(p.Steps, evaluations.Step{Key: key, Type: evaluations.TypeInput, Origin: s.Origin, References: triple("query", r)})
		p.Mappings = append(p.Mappings, mapping("query", "data", key, "attributes.ag.data"))
		sourceKeys = append(sourceKeys, key)
	}
	for _, s := range src.Testsets {
		r, err := f.Testsets.Resolve(ctx, sc, revRefs(s.RevisionID))
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, ErrUnresolved(TestsetSteps, s.RevisionID, "Testset")
		}
		cols, err := f.testsetColumns(ctx, sc, r)
		if err != nil {
			return nil, err
		}
		key := "testset-" + r.Slug
		p.Steps = append(p.Steps, evaluations.Step{Key: key, Type: evaluations.TypeInput, Origin: s.Origin, References: triple("testset", r)})
		for _, c := range cols {
			p.Mappings = append(p.Mappings, mapping("testset", c, key, "data."+c))
		}
		sourceKeys = append(sourceKeys, key)
	}
	for _, s := range src.Applications {
		r, err := f.workflow(ctx, sc, "application", ApplicationSteps, s.RevisionID)
		if err != nil {
			return nil, err
		}
		key := "application-" + r.Slug
		p.Steps = append(p.Steps, evaluations.Step{Key: key, Type: evaluations.TypeInvocation, Origin: s.Origin, References: triple("application", r),
			Inputs: []evaluations.StepInput{{Key: "__all_inputs__"}}})
		p.Mappings = append(p.Mappings, mapping("invocation", "outputs", key, "attributes.ag.data.outputs"))
	}
	var evInputs []evaluations.StepInput
	if len(src.Applications) > 0 {
		evInputs = append(evInputs, evaluations.StepInput{Key: "__all_invocations__"})
	}
	if len(sourceKeys) > 0 {
		evInputs = append(evInputs, evaluations.StepInput{Key: "__all_inputs__"})
	}
	for _, s := range src.Evaluators {
		r, err := f.workflow(ctx, sc, "evaluator", EvaluatorSteps, s.RevisionID)
		if err != nil {
			return nil, err
		}
		key := "evaluator-" + r.Slug
		st := evaluations.Step{Key: key, Type: evaluations.TypeAnnotation, Origin: s.Origin, References: triple("evaluator", r), Inputs: evInputs}
		outputs := outputsSchema(r.Data)
		if outputs != nil {
			st.Schemas = &evaluations.StepSchemas{Outputs: outputs}
		}
		p.Steps = append(p.Steps, st)
		p.Mappings = append(p.Mappings, EvaluatorMappings(key, outputs)...)
	}
	return p, nil
}

// revRefs names a revision by id.
func revRefs(id uuid.UUID) versioned.Refs {
	return versioned.Refs{Revision: &versioned.Ref{ID: &id}}
}

// triple is the artifact, variant and revision references of r under the
// entity kind (testset, testset_variant, testset_revision, …).
func triple(kind string, r *versioned.Revision) map[string]evaluations.Ref {
	s := func(v string) *string { return &v }
	version := strconv.Itoa(r.Version)
	return map[string]evaluations.Ref{
		kind:               {ID: s(r.ArtifactID.String()), Slug: s(r.ArtifactSlug)},
		kind + "_variant":  {ID: s(r.VariantID.String()), Slug: s(r.VariantSlug)},
		kind + "_revision": {ID: s(r.ID.String()), Slug: s(r.Slug), Version: &version},
	}
}

func mapping(kind, name, key, path string) evaluations.Mapping {
	return evaluations.Mapping{Column: evaluations.MappingColumn{Kind: kind, Name: name}, Step: evaluations.MappingStep{Key: key, Path: path}}
}

// testsetColumns checks that the revision has testcases, each with data,
// and returns the keys of the first one's data in order (its mappings).
func (f Families) testsetColumns(ctx context.Context, sc scope.Scope, r *versioned.Revision) ([]string, error) {
	if len(r.TestcaseIDs) == 0 {
		return nil, errUnusable(TestsetSteps, r.ID, fmt.Sprintf("Testset revision '%s' has no testcases.", r.ID))
	}
	tcs, err := f.Testsets.Testcases(ctx, sc, r)
	if err != nil {
		return nil, err
	}
	for _, tc := range tcs {
		if keys := dataColumns(tc.Data); len(keys) == 0 {
			return nil, errUnusable(TestsetSteps, r.ID, fmt.Sprintf("Testcase '%s' of testset revision '%s' has no data.", tc.ID, r.ID))
		}
	}
	if len(tcs) < len(r.TestcaseIDs) {
		return nil, errUnusable(TestsetSteps, r.ID, fmt.Sprintf("Testset revision '%s' names testcases that are missing.", r.ID))
	}
	return dataColumns(tcs[0].Data), nil
}

// dataColumns are the keys of a testcase's data that the client wrote:
// testcase_dedup_id is the registry's (testcases package), not a column.
func dataColumns(raw json.RawMessage) []string {
	var out []string
	for _, k := range objectKeys(raw) {
		if k != "testcase_dedup_id" {
			out = append(out, k)
		}
	}
	return out
}

// workflow resolves a workflow-family revision in role (application or
// evaluator); one of another role is unresolved for this step.
func (f Families) workflow(ctx context.Context, sc scope.Scope, role, field string, id uuid.UUID) (*versioned.Revision, error) {
	what := map[string]string{"application": "Application", "evaluator": "Evaluator"}[role]
	r, err := f.Workflows.Resolve(ctx, sc, role, revRefs(id))
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrUnresolved(field, id, what)
	}
	var af map[string]any
	_ = json.Unmarshal(r.ArtifactFlags, &af)
	if is, _ := af["is_"+role].(bool); !is {
		return nil, ErrUnresolved(field, id, what)
	}
	if r.Data == nil {
		return nil, errUnusable(field, id, fmt.Sprintf("%s revision '%s' has no data to run.", what, id))
	}
	return r, nil
}

// objectKeys returns the keys of a JSON object in their order; nil when
// raw is not an object or is empty.
func objectKeys(raw json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}

// outputsSchema is data.schemas.outputs of a workflow revision, or nil.
func outputsSchema(data json.RawMessage) json.RawMessage {
	var d struct {
		Schemas struct {
			Outputs json.RawMessage `json:"outputs"`
		} `json:"schemas"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.Schemas.Outputs) == 0 || string(d.Schemas.Outputs) == "null" {
		return nil
	}
	return d.Schemas.Outputs
}

// EvaluatorMappings are an evaluator step's columns: one per leaf of its
// outputs schema (properties walked depth first, in key order, a path
// joined with dots), or a single json "outputs" column without a schema
// or with one that has no properties.
func EvaluatorMappings(key string, outputs json.RawMessage) []evaluations.Mapping {
	var leaves []string
	var walk func(raw json.RawMessage, prefix string)
	walk = func(raw json.RawMessage, prefix string) {
		var s struct {
			Properties json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(raw, &s)
		names := objectKeys(s.Properties)
		if len(names) == 0 {
			if prefix != "" {
				leaves = append(leaves, prefix)
			}
			return
		}
		var props map[string]json.RawMessage
		_ = json.Unmarshal(s.Properties, &props)
		for _, n := range names {
			p := n
			if prefix != "" {
				p = prefix + "." + n
			}
			walk(props[n], p)
		}
	}
	if outputs != nil {
		walk(outputs, "")
	}
	if len(leaves) == 0 {
		return []evaluations.Mapping{mapping("annotation", "outputs", key, "attributes.ag.data.outputs")}
	}
	out := make([]evaluations.Mapping, len(leaves))
	for i, l := range leaves {
		out[i] = mapping("annotation", l, key, "attributes.ag.data.outputs."+l)
	}
	return out
}

// selectsInvocations reports whether a query revision's filter holds, at
// its top level (under an "and", the default operator), the condition
// trace_type is invocation: a live run evaluates each new invocation, and
// a query that also matched annotations would evaluate its own output.
func selectsInvocations(data json.RawMessage) bool {
	var d struct {
		Filtering *struct {
			Operator   *string           `json:"operator"`
			Conditions []json.RawMessage `json:"conditions"`
		} `json:"filtering"`
	}
	if json.Unmarshal(data, &d) != nil || d.Filtering == nil {
		return false
	}
	if op := d.Filtering.Operator; op != nil && *op != "and" {
		return false
	}
	for _, c := range d.Filtering.Conditions {
		var cond struct {
			Field    string  `json:"field"`
			Operator *string `json:"operator"`
			Value    any     `json:"value"`
		}
		if json.Unmarshal(c, &cond) != nil {
			continue
		}
		if cond.Field == "trace_type" && (cond.Operator == nil || *cond.Operator == "is" || *cond.Operator == "eq") && cond.Value == "invocation" {
			return true
		}
	}
	return false
}
