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
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// The evaluation records' wire shapes are the model's structs
// (evaluations/model.go), rendered with encoding/json. A step's references
// are ev.Ref, whose schema name the versioned Ref already has, so steps
// (and the run data and runs holding them) are documented through the
// mirrors below (and the run flags, whose name the runtime's document
// has); TestEvalDocMirrors keeps their JSON fields equal to the
// model's.
type (
	docEvalRef struct {
		ID      *string `json:"id,omitempty" doc:"UUID."`
		Slug    *string `json:"slug,omitempty"`
		Version *string `json:"version,omitempty"`
	}
	docEvalStep struct {
		Key        string                `json:"key" example:"evaluator-exact-match"`
		Type       string                `json:"type" doc:"input, invocation or annotation."`
		Origin     string                `json:"origin" doc:"custom, human or auto; only auto annotations are executed by the workers."`
		References map[string]docEvalRef `json:"references,omitempty" doc:"By entity kind: testset, testset_variant, testset_revision, query…, application…, evaluator…"`
		Inputs     []ev.StepInput        `json:"inputs,omitempty"`
		Schemas    *ev.StepSchemas       `json:"schemas,omitempty"`
	}
	docEvalRunData struct {
		Steps       []docEvalStep   `json:"steps" doc:"Always answered, [] when the run has no steps."`
		Repeats     *int            `json:"repeats,omitempty" doc:"Default 1."`
		Concurrency *ev.Concurrency `json:"concurrency,omitempty"`
		Mappings    []ev.Mapping    `json:"mappings,omitempty"`
		ModelCache  *bool           `json:"model_cache,omitempty" doc:"false: the run's model calls are all made; absent or true, identical calls (provider, model, parameters, messages, tools, response format, repeat index) are answered from the project's model-call cache."`
		Budget      *float64        `json:"budget,omitempty" doc:"Most the run's model calls may cost, USD by the price table: once reached the workers start no more cells and cancel the run with {type: budget_exceeded, budget, spent, message} under meta.stop. A live run's budget is per UTC day: once the day's cells cost it, the run scores no window until 00:00 UTC and stays running and active, with {type: daily_budget_reached, budget, spent, day, resumes_at, message} under meta.pause until it scores again."`
	}
	docEvalRun struct {
		ID          string          `json:"id"`
		Version     string          `json:"version" example:"2025-07-14"`
		Name        *string         `json:"name,omitempty"`
		Description *string         `json:"description,omitempty"`
		Flags       docEvalRunFlags `json:"flags" doc:"has_* and is_queue are derived from the steps on every write."`
		Tags        json.RawMessage `json:"tags,omitempty"`
		Meta        json.RawMessage `json:"meta,omitempty"`
		Status      ev.Status       `json:"status" doc:"pending, queued, running, success, failure, errors or cancelled."`
		Data        docEvalRunData  `json:"data"`
		ev.Lifecycle
	}
	// docEvalRunFlags mirrors ev.RunFlags: the runtime's document has a
	// RunFlags schema of its own.
	docEvalRunFlags struct {
		IsLive        bool `json:"is_live"`
		IsActive      bool `json:"is_active"`
		IsClosed      bool `json:"is_closed" doc:"Set by close/open; a closed run refuses writes (409)."`
		IsQueue       bool `json:"is_queue" doc:"Derived: a human step (with its active default queue)."`
		IsCached      bool `json:"is_cached"`
		IsSplit       bool `json:"is_split" doc:"Run the invocation at every repeat, not only repeat 0."`
		HasQueries    bool `json:"has_queries"`
		HasTestsets   bool `json:"has_testsets"`
		HasTraces     bool `json:"has_traces"`
		HasTestcases  bool `json:"has_testcases"`
		HasEvaluators bool `json:"has_evaluators"`
		HasCustom     bool `json:"has_custom"`
		HasHuman      bool `json:"has_human"`
		HasAuto       bool `json:"has_auto"`
	}
	docEvalProgressCounts struct {
		Pending   int `json:"pending,omitempty"`
		Queued    int `json:"queued,omitempty"`
		Running   int `json:"running,omitempty"`
		Success   int `json:"success,omitempty"`
		Failure   int `json:"failure,omitempty"`
		Errors    int `json:"errors,omitempty"`
		Cancelled int `json:"cancelled,omitempty"`
		Total     int `json:"total"`
		Expected  int `json:"expected,omitempty" doc:"results only: scenarios × steps × repeats (invocations at repeat 0 unless is_split)."`
	}
	docEvalProgress struct {
		RunID     string                `json:"run_id"`
		Status    ev.Status             `json:"status"`
		Scenarios docEvalProgressCounts `json:"scenarios"`
		Results   docEvalProgressCounts `json:"results"`
		Waiting   []ev.ProviderWait     `json:"waiting,omitempty" doc:"The provider rate limits the run's cells are queued behind now (until: the runtime's estimate); absent when none."`
	}
	docEvalClaim struct {
		RunID        string           `json:"run_id"`
		Worker       string           `json:"worker"`
		LeaseSeconds float64          `json:"lease_seconds" doc:"How long the claim holds (0 < s <= 86400); an expired claim may be taken over."`
		Statuses     []ev.Status      `json:"statuses,omitempty" doc:"Also claim cells with these statuses (e.g. failure, errors)."`
		Overwrite    bool             `json:"overwrite,omitempty" doc:"Claim every listed cell."`
		Cells        []ev.ClaimCellIn `json:"cells"`
	}
)

// TestEvalDocMirrors keeps the mirrors' JSON fields equal to the model's.
func TestEvalDocMirrors(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			out = append(out, rt.Field(i).Name+" "+name)
		}
		return out
	}
	require.Equal(t, fields(ev.Ref{}), fields(docEvalRef{}))
	require.Equal(t, fields(ev.RunFlags{}), fields(docEvalRunFlags{}))
	require.Equal(t, fields(ev.Step{}), fields(docEvalStep{}))
	require.Equal(t, fields(ev.RunData{}), fields(docEvalRunData{}))
	require.Equal(t, fields(ev.Run{}), fields(docEvalRun{}))
	require.Equal(t, fields(ev.ClaimRequest{}), fields(docEvalClaim{}))
}

// evaluationBindings are evaluationAPI.route's routes.
func evaluationBindings() []apidoc.Binding {
	p := "/api/evaluations"
	count := apidoc.Field{Name: "count", Value: 0}
	win := apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}, Doc: "Present when the page is full: resend it for the next page."}
	one := func(key string, v any) any { return apidoc.Envelope(count, apidoc.Field{Name: key, Value: v}) }
	many := func(key string, v any) any { return apidoc.Envelope(count, apidoc.Field{Name: key, Value: v}, win) }
	in := func(key string, v any) any { return apidoc.Envelope(apidoc.Field{Name: key, Value: v}) }
	ids := func(key string) any { return apidoc.Envelope(apidoc.Field{Name: key, Value: []uuid.UUID{}}) }
	deleted := func(key string) any { return apidoc.Envelope(count, apidoc.Field{Name: key, Value: []uuid.UUID{}}) }
	deletedOne := func(key string) any { return apidoc.Envelope(count, apidoc.Field{Name: key, Value: uuid.UUID{}}) }
	filter := func(key string, kind ev.Kind) any {
		var fs []apidoc.Field
		for _, k := range filterKeys[kind] {
			var v any = []string{}
			switch k {
			case "flags", "tags", "meta":
				v = map[string]any{}
			case "include_archived":
				v = false
			case "name", "description", "id", "run_id", "scenario_id", "step_key", "status", "trace_id", "testcase_id", "hash_id":
				v = ""
			case "repeat_idx", "interval":
				v = 0
			case "repeat_idxs", "intervals":
				v = []int{}
			case "references":
				v = []docEvalRef{}
			}
			doc := ""
			switch k {
			case "timestamp_from":
				v, doc = time.Time{}, "Keeps the records whose timestamp is at or after it."
			case "timestamp_before":
				v, doc = time.Time{}, "Keeps the records whose timestamp is before it."
			}
			if (k == "scenario_ids" || k == "timestamps") && (kind == ev.KindMetric || kind == ev.KindResult || kind == ev.KindScenario) {
				v, doc = json.RawMessage(nil), "A list, or a boolean: true keeps the records that have one, false those that have none."
			}
			fs = append(fs, apidoc.Field{Name: k, Value: v, Doc: doc})
		}
		if key == "metrics+metric" { // the metrics query: the compatible key and ours
			f := apidoc.Envelope(fs...)
			return apidoc.Envelope(apidoc.Field{Name: "metrics", Value: f, Doc: "The filter (the compatible clients' key)."},
				apidoc.Field{Name: "metric", Value: f, Doc: "The filter under its former key; not with metrics."},
				apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})
		}
		return apidoc.Envelope(apidoc.Field{Name: key, Value: apidoc.Envelope(fs...)}, apidoc.Field{Name: "windowing", Value: &versioned.Windowing{}})
	}
	run, runs := one("run", docEvalRun{}), many("runs", []docEvalRun{})
	scen, scens := one("scenario", ev.Scenario{}), many("scenarios", []ev.Scenario{})
	res, ress := one("result", ev.Result{}), many("results", []ev.Result{})
	mets := many("metrics", []ev.Metric{})
	q, qs := one("queue", ev.Queue{}), many("queues", []ev.Queue{})
	b := []apidoc.Binding{
		{Method: "POST", Path: p + "/runs", Request: in("runs", []docEvalRun{}), Response: runs},
		{Method: "PATCH", Path: p + "/runs", Request: in("runs", []docEvalRun{}), Response: runs},
		{Method: "DELETE", Path: p + "/runs", Request: ids("run_ids"), Response: deleted("run_ids")},
		{Method: "POST", Path: p + "/runs/query", Request: filter("run", ev.KindRun), Response: runs},
		{Method: "POST", Path: p + "/runs/close", Request: ids("run_ids"), Response: runs},
		{Method: "POST", Path: p + "/runs/open", Request: ids("run_ids"), Response: runs},
		{Method: "GET", Path: p + "/runs/{id}", Response: run},
		{Method: "PATCH", Path: p + "/runs/{id}", Request: in("run", docEvalRun{}), Response: run},
		{Method: "DELETE", Path: p + "/runs/{id}", Response: deletedOne("run_id")},
		{Method: "POST", Path: p + "/runs/{id}/close", Response: run},
		{Method: "POST", Path: p + "/runs/{id}/close/{status}", Response: run},
		{Method: "POST", Path: p + "/runs/{id}/open", Response: run},
		{Method: "GET", Path: p + "/runs/{id}/queues/default", Response: q},
		{Method: "GET", Path: p + "/runs/{id}/progress", Response: one("progress", docEvalProgress{})},
		{Method: "POST", Path: p + "/scenarios", Request: in("scenarios", []ev.Scenario{}), Response: scens},
		{Method: "PATCH", Path: p + "/scenarios", Request: in("scenarios", []ev.Scenario{}), Response: scens},
		{Method: "DELETE", Path: p + "/scenarios", Request: ids("scenario_ids"), Response: deleted("scenario_ids")},
		{Method: "POST", Path: p + "/scenarios/query", Request: filter("scenario", ev.KindScenario), Response: scens},
		{Method: "GET", Path: p + "/scenarios/{id}", Response: scen},
		{Method: "PATCH", Path: p + "/scenarios/{id}", Request: in("scenario", ev.Scenario{}), Response: scen},
		{Method: "DELETE", Path: p + "/scenarios/{id}", Response: deletedOne("scenario_id")},
		{Method: "DELETE", Path: p + "/results", Request: ids("result_ids"), Response: deleted("result_ids")},
		{Method: "POST", Path: p + "/results/query", Request: filter("result", ev.KindResult), Response: ress},
		{Method: "GET", Path: p + "/results/{id}", Response: res},
		{Method: "DELETE", Path: p + "/results/{id}", Response: deletedOne("result_id")},
		{Method: "DELETE", Path: p + "/metrics", Request: apidoc.Envelope(apidoc.Field{Name: "metrics_ids", Value: []uuid.UUID{}},
			apidoc.Field{Name: "metric_ids", Value: []uuid.UUID{}, Doc: "The former key, read when metrics_ids is absent."}),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "metrics_ids", Value: []uuid.UUID{}}, apidoc.Field{Name: "metric_ids", Value: []uuid.UUID{}})},
		{Method: "POST", Path: p + "/metrics/query", Request: filter("metrics+metric", ev.KindMetric), Response: mets},
		{Method: "POST", Path: p + "/metrics/refresh", Request: filter("metrics", ev.KindMetric), Response: mets},
		{Method: "GET", Path: p + "/metrics/{id}", Response: apidoc.Envelope(count, apidoc.Field{Name: "metrics", Value: []ev.Metric{}}, apidoc.Field{Name: "metric", Value: ev.Metric{}})},
		{Method: "DELETE", Path: p + "/metrics/{id}", Response: apidoc.Envelope(count, apidoc.Field{Name: "metrics_ids", Value: []uuid.UUID{}}, apidoc.Field{Name: "metric_id", Value: uuid.UUID{}})},
		{Method: "POST", Path: p + "/queues", Request: in("queues", []ev.Queue{}), Response: qs},
		{Method: "PATCH", Path: p + "/queues", Request: in("queues", []ev.Queue{}), Response: qs},
		{Method: "DELETE", Path: p + "/queues", Request: ids("queue_ids"), Response: deleted("queue_ids")},
		{Method: "POST", Path: p + "/queues/query", Request: filter("queue", ev.KindQueue), Response: qs},
		{Method: "GET", Path: p + "/queues/{id}", Response: q},
		{Method: "PATCH", Path: p + "/queues/{id}", Request: in("queue", ev.Queue{}), Response: q},
		{Method: "DELETE", Path: p + "/queues/{id}", Response: deletedOne("queue_id")},
		{Method: "POST", Path: p + "/queues/{id}/scenarios/query", Request: filter("scenario", ev.KindScenario), Response: scens},
		{Method: "POST", Path: "/api/internal/evaluations/runs/{id}/settle", Response: apidoc.Envelope(count,
			apidoc.Field{Name: "run", Value: docEvalRun{}}, apidoc.Field{Name: "progress", Value: docEvalProgress{}})},
		{Method: "POST", Path: "/api/internal/evaluations/runs/{id}/fail", Request: apidoc.Envelope(apidoc.Field{Name: "error", Value: json.RawMessage(nil)}), Response: run},
		{Method: "POST", Path: "/api/internal/evaluations/runs/{id}/cancel", Request: apidoc.Envelope(apidoc.Field{Name: "stop", Value: json.RawMessage(nil)}), Response: run},
		{Method: "POST", Path: "/api/internal/evaluations/runs/{id}/pause", Request: apidoc.Envelope(apidoc.Field{Name: "pause", Value: json.RawMessage(nil)}), Response: run},
		{Method: "POST", Path: "/api/internal/evaluations/results/claim", Request: docEvalClaim{}, Response: many("results", []ev.Result{})},
		{Method: "POST", Path: "/api/internal/evaluations/results/renew", Request: docEvalClaim{}, Response: apidoc.Envelope(count)},
	}
	for _, m := range []string{"POST", "PUT", "PATCH"} {
		b = append(b, apidoc.Binding{Method: m, Path: p + "/results", Request: in("results", []ev.Result{}), Response: ress},
			apidoc.Binding{Method: m, Path: p + "/metrics", Request: in("metrics", []ev.Metric{}), Response: mets})
	}
	return b
}
