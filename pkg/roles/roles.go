// Package roles is the one permission table of the platform: the roles a
// member holds in an organization, workspace or project, and what each may
// do. The gateway resolves the caller's role for the project and enforces
// it; services receive it in the scope (scope.Scope.Role) and may consult
// the same table.
package roles

import (
	"fmt"

	"github.com/assayhq/assay/pkg/errs"
)

// Role is a member's role. The order of the constants is the order of
// rights: each role can do everything the one after it can.
type Role string

const (
	Owner     Role = "owner"
	Admin     Role = "admin"
	Editor    Role = "editor"
	Annotator Role = "annotator"
	Viewer    Role = "viewer"
)

// All lists the roles from most to least rights.
var All = []Role{Owner, Admin, Editor, Annotator, Viewer}

// Permission is one right a route or use case needs.
type Permission string

const (
	Read          Permission = "read"           // read every record and trace of the project
	Write         Permission = "write"          // create, edit, archive testsets, applications, evaluators, queries, traces
	Deploy        Permission = "deploy"         // deploy a revision to an environment
	RunEvaluation Permission = "run_evaluation" // create, edit, close evaluation runs
	// RunService is invoking an application or evaluator through the
	// runtime (the playground, an evaluator's try-out, an SDK call); the
	// compatible platform's runtime checks a permission of this name
	// (action run_service) before every call.
	RunService    Permission = "run_service"
	Annotate      Permission = "annotate"       // write annotations and results of human steps
	ManageKeys    Permission = "manage_keys"    // create and revoke API keys, manage provider secrets
	ManageMembers Permission = "manage_members" // invite, remove members, change roles
	Own           Permission = "own"            // delete or transfer the organization
)

// Permissions lists every permission, for tables and tests.
var Permissions = []Permission{Read, Write, Deploy, RunEvaluation, RunService, Annotate, ManageKeys, ManageMembers, Own}

// table is the permission table. A key created by a member carries at
// most the member's role, so it can never hold a permission its creator
// lacks.
var table = map[Role]map[Permission]bool{
	Owner:     set(Read, Write, Deploy, RunEvaluation, RunService, Annotate, ManageKeys, ManageMembers, Own),
	Admin:     set(Read, Write, Deploy, RunEvaluation, RunService, Annotate, ManageKeys, ManageMembers),
	Editor:    set(Read, Write, Deploy, RunEvaluation, RunService, Annotate, ManageKeys),
	Annotator: set(Read, Annotate),
	Viewer:    set(Read),
}

func set(ps ...Permission) map[Permission]bool {
	m := make(map[Permission]bool, len(ps))
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// Parse returns the role named s, or an error naming it.
func Parse(s string) (Role, error) {
	r := Role(s)
	if _, ok := table[r]; !ok {
		return "", fmt.Errorf("unknown role %q: one of owner, admin, editor, annotator, viewer", s)
	}
	return r, nil
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { _, ok := table[r]; return ok }

// Can reports whether r holds p. An unknown role holds nothing.
func (r Role) Can(p Permission) bool { return table[r][p] }

// rank is r's position in All (0 = owner); unknown roles rank last.
func (r Role) rank() int {
	for i, x := range All {
		if x == r {
			return i
		}
	}
	return len(All)
}

// AtLeast reports whether r has every right of o.
func (r Role) AtLeast(o Role) bool { return r.Valid() && r.rank() <= o.rank() }

// Min returns the role with fewer rights (a key's role capped by its
// owner's).
func Min(a, b Role) Role {
	if a.rank() >= b.rank() {
		return a
	}
	return b
}

// Denied is the 403 for a caller whose role lacks p:
// {"detail": {"message": ..., "permission": p, "role": r}}.
func Denied(r Role, p Permission) error {
	role := string(r)
	if role == "" {
		role = "none"
	}
	return errs.Message(errs.Forbidden, "auth.forbidden",
		fmt.Sprintf("Your role (%s) lacks the %q permission.", role, p),
		map[string]any{"permission": string(p), "role": role})
}
