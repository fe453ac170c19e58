package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCurrentProject: GET /projects/current answers the compatible flat
// object for an API key's project and for a session's chosen (or
// default) project; /projects/{id} keeps its envelope.
func TestCurrentProject(t *testing.T) {
	s := newStack(t)
	a := s.userWithPassword(t, "cur@example.com", "correct horse")
	for _, auth := range []string{a.auth(), a.key} { // both forms the SDK sends
		cur := s.want(t, http.StatusOK, "GET", "/api/projects/current", auth, nil)
		assert.Equal(t, a.projectID, cur["project_id"])
		assert.Equal(t, a.workspaceID, cur["workspace_id"])
		assert.NotEmpty(t, cur["organization_id"])
		assert.Equal(t, "Default", cur["project_name"])
		assert.NotEmpty(t, cur["workspace_name"])
		assert.NotEmpty(t, cur["organization_name"])
		assert.Equal(t, true, cur["is_default_project"])
		assert.Equal(t, "owner", cur["user_role"])
		assert.Equal(t, false, cur["is_demo"])
		assert.NotContains(t, cur, "count")
	}
	byID := s.want(t, http.StatusOK, "GET", "/api/projects/"+a.projectID, a.auth(), nil)
	assert.EqualValues(t, 1, byID["count"])

	second := obj(s.want(t, http.StatusOK, "POST", "/api/projects", a.auth(), map[string]any{"workspace_id": a.workspaceID, "name": "Second"}), "project")
	si, _ := s.signIn(t, "cur@example.com", "correct horse")
	r := s.do(t, "GET", "/api/projects/current", "", nil, si.headers()...)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, a.projectID, r.json(t)["project_id"], "the session's default project")
	r = s.do(t, "GET", "/api/projects/current?project_id="+second["id"].(string), "", nil, si.headers()...)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, second["id"], r.json(t)["project_id"])
	assert.Equal(t, false, r.json(t)["is_default_project"])

	s.want(t, http.StatusUnauthorized, "GET", "/api/projects/current", "", nil)
}

// TestSDKLinks: the web-app links the compatible SDK prints redirect to
// the console's pages, without credentials; ids are checked.
func TestSDKLinks(t *testing.T) {
	s := newStack(t)
	ws, p, run := uuid.NewString(), uuid.NewString(), uuid.NewString()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) *http.Response {
		res, err := noRedirect.Get(s.url + path)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	res := get("/w/" + ws + "/p/" + p + "/evaluations/results/" + run)
	assert.Equal(t, http.StatusFound, res.StatusCode)
	assert.Equal(t, "/console/evaluations/"+run+"?project_id="+p, res.Header.Get("Location"))
	res = get("/api/w/" + ws + "/p/" + p + "/observability?trace=5B8EFFF798038103D269B633813FC601")
	assert.Equal(t, http.StatusFound, res.StatusCode)
	assert.Equal(t, "/console/traces/5b8efff798038103d269b633813fc601?project_id="+p, res.Header.Get("Location"))
	res = get("/w/" + ws + "/p/" + p + "/observability")
	assert.Equal(t, "/console/traces?project_id="+p, res.Header.Get("Location"))
	for _, bad := range []string{
		"/w/" + ws + "/p/nope/evaluations/results/" + run,
		"/w/" + ws + "/p/" + p + "/evaluations/results/..%2F..%2Fevil",
		"/w/" + ws + "/p/" + p + "/observability?trace=//evil.example",
	} {
		assert.Equal(t, http.StatusUnprocessableEntity, get(bad).StatusCode, bad)
	}
}
