package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uiQueue is a simple queue as the compatible clients decode it: the
// generated API clients type data.queries/testsets as string lists, and
// the web app's schema requires id and run_id, data.kind when data is
// there, and tags as a list of strings (or null, or absent).
type uiQueue struct {
	ID          *string          `json:"id"`
	RunID       *string          `json:"run_id"`
	Name        *string          `json:"name"`
	Description *string          `json:"description"`
	Status      *string          `json:"status"`
	Flags       *json.RawMessage `json:"flags"`
	Tags        []string         `json:"tags"`
	Data        *struct {
		Kind        *string         `json:"kind"`
		Queries     []string        `json:"queries"`
		Testsets    []string        `json:"testsets"`
		Evaluators  json.RawMessage `json:"evaluators"`
		Repeats     *int            `json:"repeats"`
		Assignments [][]string      `json:"assignments"`
		Settings    *map[string]any `json:"settings"`
	} `json:"data"`
}

// decodeQueues strictly decodes the queues under key of a 200 answer.
func decodeQueues(t *testing.T, r resp, key string) []uiQueue {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.body, &env))
	raws := []json.RawMessage{env[key]}
	if key == "queues" {
		raws = nil
		require.NoError(t, json.Unmarshal(env[key], &raws), string(r.body))
	}
	var out []uiQueue
	for _, raw := range raws {
		var q uiQueue
		require.NoError(t, json.Unmarshal(raw, &q), "a generated client decodes %s", raw)
		require.NotNil(t, q.ID, "id: %s", raw)
		require.NotNil(t, q.RunID, "run_id: %s", raw)
		if q.Status != nil {
			assert.Contains(t, []string{"pending", "queued", "running", "success", "failure", "errors", "cancelled"}, *q.Status)
		}
		if q.Data != nil {
			require.NotNil(t, q.Data.Kind, "data.kind is required with data: %s", raw)
			assert.Contains(t, []string{"queries", "testsets", "traces", "testcases"}, *q.Data.Kind)
		}
		var generic map[string]any
		require.NoError(t, json.Unmarshal(raw, &generic))
		if tags, ok := generic["tags"]; ok && tags != nil {
			_, isList := tags.([]any)
			assert.True(t, isList, "tags is a list, null or absent: %s", raw)
		}
		out = append(out, q)
	}
	return out
}

// TestSimpleQueuesAsTheCompatibleClientsReadThem replays the web app's
// simple-queue requests (create, query, get, scenarios, traces, delete)
// and decodes every answer as its schema and the generated clients do.
func TestSimpleQueuesAsTheCompatibleClientsReadThem(t *testing.T) {
	s := newEvalServer(t)
	e := s.entities(t)
	p := "/simple/queues"
	annotator := s.user.String()

	// both input forms of testsets: a list and an {id: origin} object
	for _, ts := range []any{[]string{e.testset}, m{e.testset: "custom"}} {
		qs := decodeQueues(t, s.do(t, "POST", p+"/", m{"queue": m{"name": "sets", "data": m{"testsets": ts, "evaluators": []string{e.human}}}}), "queue")
		assert.Equal(t, []string{e.testset}, qs[0].Data.Testsets, "testsets echo as a list of revision ids")
		assert.Equal(t, "testsets", *qs[0].Data.Kind)
	}
	q := decodeQueues(t, s.do(t, "POST", p+"/", m{"queue": m{"name": "review", "description": "d", "tags": m{},
		"data": m{"kind": "traces", "evaluators": []string{e.human}, "repeats": 1, "assignments": [][]string{{annotator}},
			"settings": m{"batch_size": 5, "batch_offset": 0}}}}), "queue")[0]
	qid := *q.ID

	queries := []m{{}, {"queue": m{"kind": "traces"}}, {"queue": m{"name": "review"}, "windowing": m{"limit": 10}},
		{"queue": m{"user_id": annotator}}}
	for _, body := range queries {
		qs := decodeQueues(t, s.do(t, "POST", p+"/query", body), "queues")
		assert.NotEmpty(t, qs, "%v", body)
	}
	kinds := decodeQueues(t, s.do(t, "POST", p+"/query", m{"queue": m{"kind": "testsets"}}), "queues")
	for _, k := range kinds {
		assert.Equal(t, "testsets", *k.Data.Kind, "the kind filter holds")
	}
	assert.Len(t, kinds, 2)
	none := decodeQueues(t, s.do(t, "POST", p+"/query", m{"queue": m{"user_id": uuid.NewString(), "kind": "traces"}}), "queues")
	for _, q := range none {
		assert.NotEqual(t, qid, *q.ID, "a user the queue does not assign")
	}

	decodeQueues(t, s.do(t, "GET", p+"/"+qid, nil), "queue")
	added := s.ok(t, "POST", p+"/"+qid+"/traces/", m{"trace_ids": []string{strings.Repeat("d", 32)}})
	assert.EqualValues(t, 1, added["count"])
	sc := s.ok(t, "POST", p+"/"+qid+"/scenarios/query", m{"user_id": annotator, "windowing": m{"limit": 50}})
	assert.EqualValues(t, 1, sc["count"])

	r := s.do(t, "DELETE", p+"/"+qid, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, m{"count": float64(0)}, s.ok(t, "GET", p+"/"+qid, nil), "gone")
	for _, q := range decodeQueues(t, s.do(t, "POST", p+"/query", m{}), "queues") {
		assert.NotEqual(t, qid, *q.ID, "a deleted queue leaves the list")
	}
}
