// Package authz is the gateway's one route table: for every route it serves
// or forwards (method and canonical path pattern), the permission the
// caller's role must hold, and whether a success is written to the audit
// log. The middleware in this package enforces it after authentication;
// a test fails when a route of the gateway or of a proxied service has no
// entry, so no route can skip it.
package authz

import (
	"strings"
	"sync"

	"github.com/assayhq/assay/pkg/roles"
)

// Access says who decides whether a route may be called.
type Access int

const (
	// ByRole: the caller's role in the scope's project must hold Perm.
	ByRole Access = iota
	// Open routes need no credentials (health, docs, sign-in).
	Open
	// AdminKey routes are authorized by the admin key alone.
	AdminKey
	// ByTarget routes name their own target (an organization, workspace or
	// project, or the caller's own profile) and their handler authorizes
	// the caller's role on it, which may differ from the key's project.
	ByTarget
)

// Rule is one entry of the table.
type Rule struct {
	// Method is an HTTP method; "GET" also covers HEAD; "*" any method.
	Method string
	// Pattern is a canonical path (no /api, no trailing slash) of
	// segments: a literal, ":name" (one segment, recorded as a target id
	// for the audit log) or "**" (any number of segments, also none).
	Pattern string
	Access  Access
	// Perm is what the caller's role must hold (Access ByRole).
	Perm roles.Permission
	// Audit names the audited family a 2xx unsafe request on the route
	// is logged under; "" = not audited.
	Audit string
}

// Table is the route table; the first matching rule wins, so specific
// rules come before their family's defaults.
//
// Choices the table makes:
//   - POST routes that only read (query, log, retrieve, resolve, download,
//     compare, analytics, inspect) need read.
//   - Every unsafe environment route needs deploy: an environment's
//     revision is the map of what is deployed, so committing one deploys.
//   - Writing evaluation results needs annotate: a human step's result is
//     written through the same routes (from the annotation queues), and an
//     annotator must be able to record it; deleting results, and every
//     other evaluation write, needs run_evaluation. The registry lets an
//     annotator write human steps only (evaluations.mayWrite), and every
//     result write is audited.
//   - Secrets, like keys, need manage_keys to be read at all: their names
//     and providers are the project's credentials inventory.
var Table = []Rule{
	// Open and admin routes.
	{Method: "GET", Pattern: "/health", Access: Open},
	{Method: "GET", Pattern: "/ready", Access: Open},
	{Method: "GET", Pattern: "/openapi.json", Access: Open},
	{Method: "GET", Pattern: "/docs", Access: Open},
	{Method: "GET", Pattern: "/docs/redoc.standalone.js", Access: Open},
	{Method: "GET", Pattern: "/", Access: Open},
	{Method: "GET", Pattern: "/console/**", Access: Open},
	{Method: "GET", Pattern: "/w/**", Access: Open}, // the compatible SDK's links, redirected to the console
	{Method: "POST", Pattern: "/auth/sign-in", Access: Open},
	{Method: "GET", Pattern: "/auth/session", Access: Open},
	{Method: "POST", Pattern: "/auth/sign-out", Access: Open},
	{Method: "POST", Pattern: "/auth/password-reset", Access: Open},
	{Method: "POST", Pattern: "/auth/password-reset/confirm", Access: Open},
	{Method: "POST", Pattern: "/invitations/accept", Access: Open},
	// The compatible accept: the token is the credential (a session's user,
	// when signed in, is read by the handler).
	{Method: "POST", Pattern: "/organizations/:id/workspaces/:workspace_id/invite/accept", Access: Open, Audit: "invitations"},
	{Method: "*", Pattern: "/admin/**", Access: AdminKey, Audit: "admin"},

	// The gateway's own routes.
	{Method: "*", Pattern: "/profile", Access: ByTarget},
	{Method: "GET", Pattern: "/keys", Access: ByRole, Perm: roles.ManageKeys},
	{Method: "POST", Pattern: "/keys", Access: ByRole, Perm: roles.ManageKeys, Audit: "keys"},
	{Method: "DELETE", Pattern: "/keys/:id", Access: ByRole, Perm: roles.ManageKeys, Audit: "keys"},
	{Method: "GET", Pattern: "/audit", Access: ByRole, Perm: roles.ManageMembers},
	{Method: "*", Pattern: "/organizations/:id/members/**", Access: ByTarget, Audit: "members"},
	{Method: "*", Pattern: "/organizations/:id/workspaces/:workspace_id/invite/**", Access: ByTarget, Audit: "invitations"},
	{Method: "*", Pattern: "/organizations/**", Access: ByTarget, Audit: "organizations"},
	{Method: "*", Pattern: "/workspaces/:id/members/**", Access: ByTarget, Audit: "members"},
	{Method: "*", Pattern: "/workspaces/:id/invitations/**", Access: ByTarget, Audit: "invitations"},
	{Method: "*", Pattern: "/workspaces/:id/users", Access: ByTarget, Audit: "members"},
	{Method: "*", Pattern: "/workspaces/:id/roles", Access: ByTarget, Audit: "members"},
	{Method: "*", Pattern: "/workspaces/**", Access: ByTarget, Audit: "workspaces"},
	{Method: "*", Pattern: "/projects/:id/members/**", Access: ByTarget, Audit: "members"},
	{Method: "*", Pattern: "/projects/**", Access: ByTarget, Audit: "projects"},
	{Method: "GET", Pattern: "/access/roles", Access: ByTarget}, // any signed-in user: the static role table

	// Credentials.
	{Method: "*", Pattern: "/secrets/**", Access: ByRole, Perm: roles.ManageKeys, Audit: "secrets"},

	// POST routes that only read.
	{Method: "POST", Pattern: "/**/query", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/**/revisions/log", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/**/revisions/retrieve", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/**/revisions/resolve", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/**/:id/download", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/evaluations/runs/compare", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/variants/configs/fetch", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/tracing/spans/analytics", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/services/inspect", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/services/:key/:version/inspect", Access: ByRole, Perm: roles.Read},

	// Deployments.
	{Method: "POST", Pattern: "/:family/revisions/deploy", Access: ByRole, Perm: roles.Deploy, Audit: "deployments"},
	{Method: "GET", Pattern: "/environments/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/environments/**", Access: ByRole, Perm: roles.Deploy, Audit: "deployments"},
	{Method: "GET", Pattern: "/simple/environments/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/simple/environments/**", Access: ByRole, Perm: roles.Deploy, Audit: "deployments"},

	// Evaluations.
	{Method: "GET", Pattern: "/evaluations/**", Access: ByRole, Perm: roles.Read},
	{Method: "POST", Pattern: "/evaluations/results", Access: ByRole, Perm: roles.Annotate, Audit: "evaluation_results"},
	{Method: "PUT", Pattern: "/evaluations/results", Access: ByRole, Perm: roles.Annotate, Audit: "evaluation_results"},
	{Method: "PATCH", Pattern: "/evaluations/results", Access: ByRole, Perm: roles.Annotate, Audit: "evaluation_results"},
	{Method: "DELETE", Pattern: "/evaluations/results/**", Access: ByRole, Perm: roles.RunEvaluation, Audit: "evaluation_results"},
	{Method: "DELETE", Pattern: "/evaluations/results", Access: ByRole, Perm: roles.RunEvaluation, Audit: "evaluation_results"},
	{Method: "*", Pattern: "/evaluations/runs/**", Access: ByRole, Perm: roles.RunEvaluation, Audit: "evaluation_runs"},
	{Method: "*", Pattern: "/evaluations/**", Access: ByRole, Perm: roles.RunEvaluation},
	{Method: "GET", Pattern: "/simple/evaluations/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/simple/evaluations/**", Access: ByRole, Perm: roles.RunEvaluation, Audit: "evaluation_runs"},
	{Method: "GET", Pattern: "/simple/queues/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/simple/queues/**", Access: ByRole, Perm: roles.RunEvaluation, Audit: "evaluation_queues"}, // adding items writes result cells
	{Method: "GET", Pattern: "/annotations/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/annotations/**", Access: ByRole, Perm: roles.Annotate, Audit: "annotations"},

	// The runtime: invoking a workflow runs it (and costs provider tokens).
	{Method: "GET", Pattern: "/services/**", Access: ByRole, Perm: roles.Read},
	{Method: "*", Pattern: "/services/**", Access: ByRole, Perm: roles.RunService},
}

// families are the proxied route families whose routes are reads when GET
// and writes otherwise, once the specific rules above have not matched.
var families = []string{
	"testsets", "testcases", "workflows", "applications", "evaluators", "queries", "folders", "variants",
	"simple/testsets", "simple/workflows", "simple/applications", "simple/evaluators", "simple/queries",
	"otlp", "tracing", "traces", "spans", "invocations", "simple/traces", "simple/spans",
	"public", // Langfuse's public API prefix: its OTLP endpoint is an ingest route like otlp
}

func init() {
	for _, f := range families {
		Table = append(Table,
			Rule{Method: "GET", Pattern: "/" + f + "/**", Access: ByRole, Perm: roles.Read},
			Rule{Method: "*", Pattern: "/" + f + "/**", Access: ByRole, Perm: roles.Write})
	}
}

// Lookup returns the first rule matching the method and canonical path,
// with the values of its ":name" segments.
func Lookup(method, path string) (Rule, map[string]string, bool) {
	segs := split(path)
	if len(segs) > 0 && segs[0] == "preview" { // the proxy serves /preview/X as /X
		segs = segs[1:]
	}
	if method == "HEAD" {
		method = "GET"
	}
	patternsOnce.Do(func() {
		patterns = make([][]string, len(Table))
		for i, r := range Table {
			patterns[i] = split(r.Pattern)
		}
	})
	params := map[string]string{} // one map, cleared after each miss
	for i, r := range Table {
		if r.Method != "*" && r.Method != method {
			continue
		}
		if match(patterns[i], segs, params) {
			return r, params, true
		}
		clear(params)
	}
	return Rule{}, nil, false
}

// patterns are the Table's patterns split into segments, once (the table
// is complete after init).
var (
	patternsOnce sync.Once
	patterns     [][]string
)

// MatchPattern reports whether a canonical path matches a pattern of the
// table's syntax, with the values of its ":name" segments.
func MatchPattern(pattern, path string) (map[string]string, bool) {
	params := map[string]string{}
	if !match(split(pattern), split(path), params) {
		return nil, false
	}
	return params, true
}

func split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match reports whether the pattern's segments match the path's. A
// pattern has at most one "**", so what follows it must match the path's
// last segments: the cost is linear in the pattern.
func match(pat, path []string, params map[string]string) bool {
	for i, s := range pat {
		if s == "**" {
			rest := pat[i+1:]
			j := len(path) - len(rest) // "**" takes path[i:j]
			return j >= i && match(rest, path[j:], params)
		}
		if i >= len(path) {
			return false
		}
		switch {
		case strings.HasPrefix(s, ":"):
			params[s[1:]] = path[i]
		case s != path[i]:
			return false
		}
	}
	return len(pat) == len(path)
}
