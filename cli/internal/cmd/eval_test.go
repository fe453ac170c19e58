package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/cli/internal/api"
)

// The global metric may sit on a later page than the per-scenario ones:
// findGlobal follows the windowing the server hands back.
func TestFindGlobalPages(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&b))
		bodies = append(bodies, b)
		if len(bodies) == 1 {
			w.Write([]byte(`{"count": 2, "metrics": [{"run_id": "r", "scenario_id": "s1", "data": {}}, {"run_id": "r", "scenario_id": "s2"}],
			  "windowing": {"next": "m2", "limit": 2}}`))
			return
		}
		w.Write([]byte(`{"count": 2, "metrics": [{"run_id": "r", "timestamp": "2026-01-01T00:00:00Z"}, {"run_id": "r", "id": "g", "data": {"x": {}}}]}`))
	}))
	defer srv.Close()
	m, err := findGlobal(context.Background(), api.New(srv.URL, "k", time.Second), "r")
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.Equal(t, "g", m["id"])
	require.Len(t, bodies, 2)
	assert.Equal(t, map[string]any{"next": "m2", "limit": 2.0}, bodies[1]["windowing"], "the next page asked as the server said")
	assert.Equal(t, map[string]any{"run_ids": []any{"r"}}, bodies[1]["metric"])
}

// A run's failed cells are grouped by step and message: the first groups
// are printed with their counts, the cells of the others counted once.
func TestPrintFailedCells(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" { // the run: its step names
			w.Write([]byte(`{"count": 1, "run": {"id": "r", "data": {"steps": [{"key": "k1", "references": {"evaluator": {"slug": "exact"}}}]}}}`))
			return
		}
		var b map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&b))
		assert.Equal(t, []any{"failure", "errors"}, b["result"].(map[string]any)["statuses"])
		var rs []map[string]any
		for i := 0; i < 3; i++ {
			rs = append(rs, map[string]any{"step_key": "k1", "status": "failure", "error": map[string]any{"message": "no column answer"}})
		}
		for i := 0; i < 6; i++ {
			rs = append(rs, map[string]any{"step_key": "k2", "status": "failure", "error": map[string]any{"message": fmt.Sprintf("timeout %d", i)}})
		}
		json.NewEncoder(w).Encode(map[string]any{"count": len(rs), "results": rs})
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	a := &app{stderr: &stderr}
	a.printFailedCells(context.Background(), api.New(srv.URL, "k", time.Second), "r", progressBody{Results: map[string]int{"failure": 9, "errors": 2}})
	assert.Equal(t, `failed: exact (3 cells): no column answer
failed: k2 (1 cell): timeout 0
failed: k2 (1 cell): timeout 1
failed: k2 (1 cell): timeout 2
failed: k2 (1 cell): timeout 3
… and 4 more failed cells (the run's results in the console, or POST /api/evaluations/results/query)
`, stderr.String())
}

// The progress line says when the run's cells wait on a provider's rate
// limit (the progress answer's waiting).
func TestProgressLineSaysItWaitsOnAProvider(t *testing.T) {
	var p progressBody
	require.NoError(t, json.Unmarshal([]byte(`{"run_id": "r", "status": "running", "results": {"success": 3, "running": 5, "total": 8, "expected": 10},
	  "waiting": [{"provider": "openai", "until": "2026-01-01T00:00:05Z"}]}`), &p))
	assert.Equal(t, "running  cells 3/10  running 5, success 3, total 8  waiting on the rate limit of openai", p.line(3, 10))
	p.Waiting = nil
	assert.Equal(t, "running  cells 3/10  running 5, success 3, total 8", p.line(3, 10))
}

// A live run paused on its daily budget reads running in its progress:
// eval show says it is paused and why, beside the status (stderr in a
// table, the pause key beside status in JSON).
func TestEvalShowSaysALiveRunIsPaused(t *testing.T) {
	const msg = "daily budget of $0.5 reached; resumes at 00:00 UTC"
	for _, tc := range []struct {
		name, flags, want string
	}{
		{"paused", `{"is_live": true, "is_active": true}`, msg},
		{"stopped", `{"is_live": true, "is_active": false}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/evaluations/runs/r/progress":
					w.Write([]byte(`{"count": 1, "progress": {"run_id": "r", "status": "running", "scenarios": {"total": 1, "success": 1}, "results": {"total": 2, "success": 2}}}`))
				case "/api/evaluations/runs/r":
					fmt.Fprintf(w, `{"count": 1, "run": {"id": "r", "status": "running", "flags": %s, "meta": {"pause": {"type": "daily_budget_reached", "message": %q}}}}`, tc.flags, msg)
				default:
					w.Write([]byte(`{"count": 0, "metrics": []}`))
				}
			}))
			defer srv.Close()
			for _, out := range []string{"table", "json"} {
				var stdout, stderr bytes.Buffer
				code := Run([]string{"--url", srv.URL, "--api-key", "k", "-o", out, "eval", "show", "r"}, nil, &stdout, &stderr)
				require.Equal(t, 0, code, "%s%s", stdout.String(), stderr.String())
				if tc.want == "" {
					assert.NotContains(t, stderr.String()+stdout.String(), "paused", out)
					continue
				}
				assert.Contains(t, stderr.String(), "run r is running, paused: "+msg, out)
				if out == "json" {
					var got map[string]any
					require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
					assert.Equal(t, "running", got["status"])
					assert.Equal(t, msg, got["pause"])
				}
			}
		})
	}
}
