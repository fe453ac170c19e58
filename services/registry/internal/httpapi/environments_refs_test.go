package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnvironmentReferencesStayInTheProject: an environment commit that
// names another project's revision by id, in data or in a delta, is
// refused with the same 422 as an id that exists nowhere (the answer tells
// nothing about other projects), naming the field; the project's own
// revision is deployed.
func TestEnvironmentReferencesStayInTheProject(t *testing.T) {
	s := newServer(t)
	_, appVar := mkWorkflow(t, s, "applications", "application", "mine")
	mine := str(obj(t, commitWF(t, s, "applications", "application", appVar, m{"uri": "code"}), "application_revision")["id"])

	other := *s
	other.project = uuid.New()
	_, theirVar := mkWorkflow(t, &other, "applications", "application", "theirs")
	theirs := str(obj(t, commitWF(t, &other, "applications", "application", theirVar, m{"uri": "code"}), "application_revision")["id"])

	env := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "prod"}}), "environment")
	commit := func(body m) resp {
		body["environment_id"], body["environment_variant_id"] = env["id"], env["variant_id"]
		return s.do(t, "POST", "/environments/revisions/commit", m{"environment_revision": body})
	}
	var msgs []string
	for _, id := range []string{theirs, "01900000-0000-7000-8000-0000000000ff"} {
		loc, msg := fieldErr(t, commit(m{"data": m{"references": m{"app.revision": m{"application_revision": m{"id": id}}}}}))
		assert.Equal(t, []any{"body", "environment_revision", "data", "references", "app.revision", "application_revision", "id"}, loc)
		loc, msg2 := fieldErr(t, commit(m{"delta": m{"set": m{"app.revision": m{"application_revision": m{"id": id}}}}}))
		assert.Equal(t, []any{"body", "environment_revision", "delta", "set", "app.revision", "application_revision", "id"}, loc)
		require.Equal(t, msg, msg2)
		msgs = append(msgs, msg)
	}
	assert.Equal(t, msgs[0], msgs[1], "another project's revision and a missing one are refused alike")

	r := commit(m{"data": m{"references": m{"app.revision": m{"application_revision": m{"id": mine}}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	refs := obj(t, r.json(t), "environment_revision", "data", "references", "app.revision")
	assert.Equal(t, mine, str(refs["application_revision"].(map[string]any)["id"]))
}
