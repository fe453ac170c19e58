package cmd

import (
	"context"
	"encoding/json"
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
