package httpapi_test

import (
	"strings"
	"testing"
)

// evalFamily stands for the /evaluations routes (and the worker's
// /internal/evaluations ones) in the registry's body fuzz target.
var evalFamily = fuzzFamily{plural: "evaluations", key: "run"}

// evalPlaceholder is the fixture a route's :id names.
func evalPlaceholder(pattern string) string {
	for _, k := range []struct{ seg, ph string }{{"/scenarios/", "$SCEN"}, {"/results/", "$RES"}, {"/metrics/", "$MET"}, {"/queues/", "$QUEUE"}} {
		if strings.Contains(pattern, k.seg+":id") {
			return k.ph
		}
	}
	return "$RUN"
}

// evalSeeds are valid bodies for the evaluation routes, over the
// fixtures of makeEvalFixtures.
func evalSeeds(method, path string) []string {
	steps := `[{"key":"testset-a","type":"input","origin":"auto","references":{"testset_revision":{"id":"0190f0a0-0000-7000-8000-000000000009","slug":"s"}}},` +
		`{"key":"application-a","type":"invocation","origin":"auto"},{"key":"evaluator-h","type":"annotation","origin":"human"}]`
	switch {
	case strings.HasSuffix(path, "/results/claim"), strings.HasSuffix(path, "/results/renew"):
		return []string{`{"run_id":"$RUN","worker":"fz","lease_seconds":30,"statuses":["failure"],"cells":[{"scenario_id":"$SCEN","step_key":"application-a","repeat_idx":0}]}`}
	case strings.HasSuffix(path, "/fail"):
		return []string{`{"error":{"message":"boom"}}`}
	case strings.HasSuffix(path, "/settle"), strings.HasSuffix(path, "/close"), strings.HasSuffix(path, "/open"):
		if strings.HasSuffix(path, "/runs/close") || strings.HasSuffix(path, "/runs/open") {
			return []string{`{"run_ids":["$RUN"]}`}
		}
		return []string{``, `{}`}
	case strings.HasSuffix(path, "/metrics/refresh"):
		return []string{`{"metrics":{"run_id":"$RUN","scenario_ids":["$SCEN"],"interval":1}}`}
	case strings.HasSuffix(path, "/scenarios/query"):
		return []string{`{"scenario":{"run_ids":["$RUN"],"statuses":["pending"],"timestamps":["2026-01-01T00:00:00Z"]},"user_id":"$RUN","windowing":{"limit":2,"order":"ascending"}}`}
	case strings.HasSuffix(path, "/query"):
		return []string{`{"windowing":{"limit":1,"next":"$RUN","newest":"2030-01-01T00:00:00Z"}}`,
			`{"run":{"references":[{"id":"0190f0a0-0000-7000-8000-000000000009"}],"flags":{"has_human":true},"tags":{"t":"v"}}}`,
			`{"result":{"run_id":"$RUN","step_keys":["application-a"],"repeat_idxs":[0],"trace_ids":["0x0123456789abcdef0123456789abcdef"]}}`,
			`{"queue":{"run_ids":["$RUN"],"include_archived":true},"metric":{"run_id":"$RUN","intervals":[1]}}`}
	case strings.HasSuffix(path, "/runs/compare"):
		return []string{`{"run_ids":["$RUN","$RUN"]}`, `{"run_ids":["$RUN","0190f0a0-0000-7000-8000-000000000009"]}`}
	case strings.Contains(path, "/runs"):
		if method == "POST" {
			return []string{`{"runs":[{"name":"fz","flags":{"is_live":true},"tags":{"t":"v"},"meta":{"m":1},"data":{"steps":` + steps + `,"repeats":2,"concurrency":{"batch_size":3},"mappings":[{"column":{"kind":"query","name":"data"},"step":{"key":"testset-a","path":"attributes.ag.data"}}]}}]}`}
		}
		if strings.HasSuffix(path, ":id") {
			return []string{`{"run":{"description":"d","flags":{"is_split":true},"data":{"steps":` + steps + `}}}`}
		}
		return []string{`{"runs":[{"id":"$RUN","status":"running"}]}`}
	case strings.Contains(path, "/scenarios"):
		if strings.HasSuffix(path, ":id") {
			return []string{`{"scenario":{"status":"running","tags":{"t":"v"},"timestamp":"2026-01-01T00:00:00Z","interval":1}}`}
		}
		return []string{`{"scenarios":[{"id":"$SCEN","run_id":"$RUN"},{"run_id":"$RUN","meta":{"m":[1,2]}}]}`}
	case strings.Contains(path, "/results"):
		return []string{`{"results":[{"run_id":"$RUN","scenario_id":"$SCEN","step_key":"application-a","repeat_idx":1,"status":"failure","error":{"message":"x"},"trace_id":"0123456789abcdef0123456789abcdef","testcase_id":"$RUN","hash_id":"h"}]}`}
	case strings.Contains(path, "/metrics"):
		return []string{`{"metrics":[{"run_id":"$RUN","data":{"evaluator-h":{"score":{"count":1}}}},{"run_id":"$RUN","scenario_id":"$SCEN"},{"run_id":"$RUN","timestamp":"2026-01-01T00:00:30Z","interval":1}]}`}
	case strings.Contains(path, "/queues"):
		if strings.HasSuffix(path, ":id") {
			return []string{`{"queue":{"name":"q","data":{"user_ids":[["$RUN"]]}}}`}
		}
		if method == "PATCH" {
			return []string{`{"queues":[{"id":"$QUEUE","flags":{"is_sequential":true}}]}`}
		}
		return []string{`{"queues":[{"run_id":"$RUN","data":{"scenario_ids":["$SCEN"],"step_keys":["evaluator-h"],"batch_size":2,"batch_offset":0}}]}`}
	}
	return []string{`{}`}
}

// makeEvalFixtures creates an active run with a human step (so a
// default queue), a scenario, a result, a metric and a plain queue.
func makeEvalFixtures(t *testing.T, s *server) map[string]string {
	steps := []m{{"key": "testset-a", "type": "input", "origin": "auto"}, {"key": "application-a", "type": "invocation", "origin": "auto"},
		{"key": "evaluator-h", "type": "annotation", "origin": "human"}}
	run := str(list(t, s.ok(t, "POST", "/evaluations/runs", m{"runs": []m{{"name": "fx", "flags": m{"is_active": true}, "data": m{"steps": steps}}}}), "runs")[0].(map[string]any)["id"])
	scen := str(list(t, s.ok(t, "POST", "/evaluations/scenarios", m{"scenarios": []m{{"run_id": run}}}), "scenarios")[0].(map[string]any)["id"])
	res := str(list(t, s.ok(t, "POST", "/evaluations/results", m{"results": []m{{"run_id": run, "scenario_id": scen, "step_key": "testset-a", "status": "success"}}}), "results")[0].(map[string]any)["id"])
	met := str(list(t, s.ok(t, "POST", "/evaluations/metrics", m{"metrics": []m{{"run_id": run}}}), "metrics")[0].(map[string]any)["id"])
	queue := str(list(t, s.ok(t, "POST", "/evaluations/queues", m{"queues": []m{{"run_id": run, "name": "fx"}}}), "queues")[0].(map[string]any)["id"])
	return map[string]string{"$RUN": run, "$SCEN": scen, "$RES": res, "$MET": met, "$QUEUE": queue}
}
