package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// The simple evaluations' and queues' wire shapes are evaluations'
// SimpleEvaluation and SimpleQueue, rendered with encoding/json; the
// mirrors below document them (a *_steps is an object revision id →
// origin, and the run flags are docEvalRunFlags), and
// TestSimpleEvalDocMirrors keeps their fields equal to the model's.
type (
	docSimpleEvaluation struct {
		ID          string          `json:"id"`
		Name        *string         `json:"name,omitempty"`
		Description *string         `json:"description,omitempty"`
		Flags       docEvalRunFlags `json:"flags"`
		Tags        json.RawMessage `json:"tags,omitempty"`
		Meta        json.RawMessage `json:"meta,omitempty" doc:"An evaluation whose topology is not supported has its reason under meta.error; one cancelled by its budget has {type: budget_exceeded, budget, spent, message} under meta.stop."`
		Data        docSimpleData   `json:"data"`
		ev.Lifecycle
		Estimate *simpleevals.Estimate `json:"-"`
	}
	docSimpleData struct {
		Status           ev.Status         `json:"status" doc:"The run's status."`
		QuerySteps       map[string]string `json:"query_steps,omitempty" doc:"Query revision id → origin (auto, human, custom). A list of ids is accepted on input (origin custom)."`
		TestsetSteps     map[string]string `json:"testset_steps,omitempty" doc:"Testset revision id → origin."`
		ApplicationSteps map[string]string `json:"application_steps,omitempty" doc:"Application revision id → origin."`
		EvaluatorSteps   map[string]string `json:"evaluator_steps,omitempty" doc:"Evaluator revision id → origin; only auto evaluators are executed."`
		Repeats          *int              `json:"repeats,omitempty"`
		Concurrency      *ev.Concurrency   `json:"concurrency,omitempty"`
		ModelCache       *bool             `json:"model_cache,omitempty" doc:"false: every model call of the run is made (no model-call cache)."`
		Budget           *float64          `json:"budget,omitempty" doc:"Most the run's model calls may cost, USD by the price table (0 < budget ≤ 1000000): the workers stop starting cells once it is reached and cancel the run with the reason under meta.stop. A live run's budget is per UTC day: once the day's cells cost it, the run scores no window until 00:00 UTC and stays running and active, with {type: daily_budget_reached, budget, spent, day, resumes_at, message} under meta.pause until it scores again."`
	}
	docSimpleQueue struct {
		ID          string             `json:"id"`
		RunID       string             `json:"run_id"`
		Name        *string            `json:"name,omitempty"`
		Description *string            `json:"description,omitempty"`
		Flags       ev.QueueFlags      `json:"flags"`
		Status      ev.Status          `json:"status"`
		Data        docSimpleQueueData `json:"data"`
		Tags        json.RawMessage    `json:"tags,omitempty"`
		Meta        json.RawMessage    `json:"meta,omitempty"`
		ev.Lifecycle
	}
	docSimpleQueueData struct {
		Kind        string                     `json:"kind,omitempty" doc:"traces, testcases, queries or testsets; always in answers (traces when the run names no other source)."`
		Queries     []string                   `json:"queries,omitempty" doc:"Query revision ids; an object revision id → origin is accepted on input."`
		Testsets    []string                   `json:"testsets,omitempty" doc:"Testset revision ids; an object revision id → origin is accepted on input."`
		Evaluators  map[string]string          `json:"evaluators,omitempty" doc:"Evaluator revision id → origin; a list of ids is accepted on input (origin human). At least one human evaluator."`
		Repeats     int                        `json:"repeats"`
		Assignments [][]string                 `json:"assignments,omitempty" doc:"One list of user ids per repeat."`
		StepKeys    []string                   `json:"step_keys,omitempty"`
		Settings    *simpleevals.QueueSettings `json:"settings,omitempty"`
	}
)

// TestSimpleEvalDocMirrors keeps the mirrors' JSON fields equal to the model's.
func TestSimpleEvalDocMirrors(t *testing.T) {
	names := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			out = append(out, rt.Field(i).Name+" "+name)
		}
		return out
	}
	require.Equal(t, names(simpleevals.SimpleEvaluation{}), names(docSimpleEvaluation{}))
	require.Equal(t, names(simpleevals.SimpleData{}), names(docSimpleData{}))
	require.Equal(t, names(simpleevals.SimpleQueue{}), names(docSimpleQueue{}))
	require.Equal(t, names(simpleevals.SimpleQueueData{}), names(docSimpleQueueData{}))
}

// simpleEvaluationBindings are simpleEvaluationAPI's and simpleQueueAPI's routes.
func simpleEvaluationBindings() []apidoc.Binding {
	count := apidoc.Field{Name: "count", Value: 0}
	win := apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}, Doc: "Present when the page is full: resend it for the next page."}
	evOne := apidoc.Envelope(count, apidoc.Field{Name: "evaluation", Value: docSimpleEvaluation{}})
	evIn := apidoc.Envelope(apidoc.Field{Name: "evaluation", Value: docSimpleEvaluation{}})
	runOne := apidoc.Envelope(count, apidoc.Field{Name: "run", Value: docEvalRun{}})
	results := apidoc.Envelope(count, apidoc.Field{Name: "results", Value: []ev.Result{}})
	scens := apidoc.Envelope(count, apidoc.Field{Name: "scenarios", Value: []ev.Scenario{}})
	slice := []apidoc.Field{{Name: "scenario_ids", Value: []uuid.UUID{}}, {Name: "step_keys", Value: []string{}}, {Name: "repeat_idxs", Value: []int{}}}
	sliceIn := apidoc.Envelope(slice...)
	processIn := apidoc.Envelope(append(append([]apidoc.Field{}, slice...),
		apidoc.Field{Name: "statuses", Value: []ev.Status{}, Doc: "Re-execute the cells in these statuses (e.g. failure, errors)."},
		apidoc.Field{Name: "overwrite", Value: false, Doc: "Re-execute every cell of the slice."})...)
	qOne := apidoc.Envelope(count, apidoc.Field{Name: "queue", Value: docSimpleQueue{}})
	p, q := "/api/simple/evaluations", "/api/simple/queues"
	estimate := apidoc.Field{Name: "estimate", Value: simpleevals.Estimate{}, Doc: "The evaluation's cost estimate: its assumptions state the formula."}
	return []apidoc.Binding{
		{Method: "POST", Path: p, Request: evIn, Response: apidoc.Envelope(count, apidoc.Field{Name: "evaluation", Value: docSimpleEvaluation{}}, estimate)},
		{Method: "POST", Path: p + "/estimate", Request: evIn, Response: apidoc.Envelope(estimate)},
		{Method: "POST", Path: p + "/query", Request: apidoc.Envelope(apidoc.Field{Name: "evaluation", Value: apidoc.Envelope(
			apidoc.Field{Name: "ids", Value: []uuid.UUID{}}, apidoc.Field{Name: "name", Value: ""}, apidoc.Field{Name: "flags", Value: map[string]any{}},
			apidoc.Field{Name: "tags", Value: map[string]any{}}, apidoc.Field{Name: "meta", Value: map[string]any{}})}, win),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "evaluations", Value: []docSimpleEvaluation{}}, win)},
		{Method: "GET", Path: p + "/{id}", Response: evOne},
		{Method: "PATCH", Path: p + "/{id}", Request: evIn, Response: evOne},
		{Method: "DELETE", Path: p + "/{id}", Response: apidoc.Envelope(count, apidoc.Field{Name: "evaluation_id", Value: uuid.UUID{}})},
		{Method: "POST", Path: p + "/{id}/start", Response: evOne},
		{Method: "POST", Path: p + "/{id}/stop", Response: evOne},
		{Method: "POST", Path: p + "/{id}/close", Response: evOne},
		{Method: "POST", Path: p + "/{id}/open", Response: evOne},
		{Method: "POST", Path: p + "/{id}/populate", Request: apidoc.Envelope(apidoc.Field{Name: "results", Value: []ev.Result{}}), Response: results},
		{Method: "POST", Path: p + "/{id}/process", Request: processIn},
		{Method: "POST", Path: p + "/{id}/probe", Request: sliceIn, Response: results},
		{Method: "POST", Path: p + "/{id}/prune", Request: sliceIn},
		{Method: "POST", Path: p + "/{id}/refresh", Request: sliceIn},
		{Method: "POST", Path: p + "/{id}/scenarios/add", Request: apidoc.Envelope(apidoc.Field{Name: "count", Value: 0},
			apidoc.Field{Name: "timestamp", Value: time.Time{}, Doc: "Floored to the minute; the scenarios get interval 1."}), Response: scens},
		{Method: "POST", Path: p + "/{id}/scenarios/remove", Request: apidoc.Envelope(apidoc.Field{Name: "scenario_ids", Value: []uuid.UUID{}})},
		{Method: "POST", Path: p + "/{id}/steps/add", Request: apidoc.Envelope(apidoc.Field{Name: "steps", Value: []docEvalStep{}},
			apidoc.Field{Name: "mappings", Value: []ev.Mapping{}}), Response: runOne},
		{Method: "POST", Path: p + "/{id}/steps/remove", Request: apidoc.Envelope(apidoc.Field{Name: "step_keys", Value: []string{}}), Response: runOne},
		{Method: "POST", Path: p + "/{id}/repeats/set", Request: apidoc.Envelope(apidoc.Field{Name: "repeats", Value: 0}), Response: runOne},
		{Method: "POST", Path: q, Request: apidoc.Envelope(apidoc.Field{Name: "queue", Value: docSimpleQueue{}}), Response: qOne},
		{Method: "DELETE", Path: q, Request: apidoc.Envelope(apidoc.Field{Name: "queue_ids", Value: []uuid.UUID{}}),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "queue_ids", Value: []uuid.UUID{}})},
		{Method: "POST", Path: q + "/query", Request: apidoc.Envelope(apidoc.Field{Name: "queue", Value: apidoc.Envelope(
			apidoc.Field{Name: "ids", Value: []uuid.UUID{}}, apidoc.Field{Name: "run_id", Value: uuid.UUID{}}, apidoc.Field{Name: "name", Value: ""},
			apidoc.Field{Name: "tags", Value: map[string]any{}}, apidoc.Field{Name: "meta", Value: map[string]any{}},
			apidoc.Field{Name: "kind", Value: "", Doc: "traces, testcases, queries or testsets."},
			apidoc.Field{Name: "user_id", Value: uuid.UUID{}, Doc: "The queues this user may work: assigned, or assigning nobody."})}, win),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "queues", Value: []docSimpleQueue{}}, win)},
		{Method: "GET", Path: q + "/{id}", Response: qOne},
		{Method: "DELETE", Path: q + "/{id}", Response: apidoc.Envelope(count, apidoc.Field{Name: "queue_id", Value: uuid.UUID{},
			Doc: "A default queue (every queue made here without step keys) is archived, its run kept; any other is deleted. {count: 0} when absent."})},
		{Method: "POST", Path: q + "/{id}/scenarios/query", Request: apidoc.Envelope(apidoc.Field{Name: "user_id", Value: uuid.UUID{}},
			apidoc.Field{Name: "scenario", Value: apidoc.Envelope(apidoc.Field{Name: "status", Value: ev.Status("")}, apidoc.Field{Name: "statuses", Value: []ev.Status{}})}, win),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "scenarios", Value: []ev.Scenario{}}, win)},
		{Method: "POST", Path: q + "/{id}/traces", Request: apidoc.Envelope(apidoc.Field{Name: "trace_ids", Value: []string{}}), Response: scens},
		{Method: "POST", Path: q + "/{id}/testcases", Request: apidoc.Envelope(apidoc.Field{Name: "testcase_ids", Value: []uuid.UUID{}}), Response: scens},
	}
}
