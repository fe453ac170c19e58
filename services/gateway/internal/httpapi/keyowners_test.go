package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEditorManagesOnlyOwnKeys: manage_keys lets an editor create keys and
// revoke the ones they made; listing and revoking everyone's keys is for
// admins and owners (keys.go, accounts.ListKeys and RevokeKey).
func TestEditorManagesOnlyOwnKeys(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "owner@example.com")
	ed := s.teamAccount(t, "editor@example.com")
	s.adminMember(t, "project", own.projectID, ed.userID, "editor")
	edKey, edKeyID := s.adminKey(t, ed.userID, own.projectID)
	ownKeyID := ids(s.want(t, http.StatusOK, "GET", "/api/keys", own.auth(), nil)["api_keys"], "id")[0]

	// the editor creates a key of their own and sees only their keys
	mine := obj(s.want(t, http.StatusOK, "POST", "/api/keys", edKey, map[string]any{"api_key": map[string]any{"name": "mine"}}), "api_key")["id"].(string)
	listed := ids(s.want(t, http.StatusOK, "GET", "/api/keys", edKey, nil)["api_keys"], "id")
	assert.ElementsMatch(t, []string{edKeyID, mine}, listed, "an editor lists only the keys they created")
	assert.NotContains(t, listed, ownKeyID)

	// the owner's key cannot be revoked by the editor, and still works
	s.denied(t, "manage_members", "editor", "DELETE", "/api/keys/"+ownKeyID, edKey, nil)
	require.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys", own.auth(), nil).status)
	// their own they can revoke
	s.want(t, http.StatusNoContent, "DELETE", "/api/keys/"+mine, edKey, nil)

	// the owner sees and revokes every key of the project
	assert.ElementsMatch(t, []string{ownKeyID, edKeyID}, ids(s.want(t, http.StatusOK, "GET", "/api/keys", own.auth(), nil)["api_keys"], "id"))
	s.want(t, http.StatusNoContent, "DELETE", "/api/keys/"+edKeyID, own.auth(), nil)
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/api/keys", edKey, nil).status)
}
