package seeder_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/gateway/internal/seeder"
)

// The registry stand-in records the calls: this test covers the seeder's
// request mapping (paths, bodies, scope headers, 409 tolerance); the
// registry's own handling of those bodies is tested in the registry.
func TestSeedProject(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var slugs []string
	project, user := uuid.New(), uuid.New()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, ok := scope.Parse(r.Header, "internal-token-xyz")
		require.True(t, ok)
		assert.Equal(t, project, sc.ProjectID)
		assert.Equal(t, user, sc.UserID)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, r.URL.Path)
		for _, v := range body {
			slugs = append(slugs, v["slug"].(string))
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	s := seeder.New(srv.URL, "internal-token-xyz", time.Second)
	require.NoError(t, s.SeedProject(context.Background(), project, user))
	assert.Equal(t, []string{"development", "staging", "production", "exact-match", "contains-json", "quality-rating"}, slugs)
	assert.Equal(t, "/simple/environments", paths[0])
	assert.Equal(t, "/simple/evaluators", paths[5])

	status = http.StatusConflict
	require.NoError(t, s.SeedProject(context.Background(), project, user), "already seeded is fine")
	status = http.StatusUnprocessableEntity
	assert.Error(t, s.SeedProject(context.Background(), project, user))
}
