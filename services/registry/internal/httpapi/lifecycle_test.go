package httpapi_test

import (
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/httpapi"
)

// routesHit records every route that answered 2xx in this package's tests,
// so TestMain can fail when a route has no successful test at all.
var routesHit sync.Map

func recordRoutes(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil && c.Response().Status < 300 {
			routesHit.Store(c.Request().Method+" "+c.Path(), true)
		}
		return err
	}
}

// TestMain runs the tests, then, when the whole package ran, checks that
// every registry route was exercised successfully at least once.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && isFullRun() {
		var missing []string
		for _, r := range httpapi.Routes(&testing.T{}) {
			if _, ok := routesHit.Load(r); !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			os.Stderr.WriteString("routes without a successful HTTP test:\n  " + strings.Join(missing, "\n  ") + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// isFullRun reports whether no -run, -bench or -short narrowed the tests.
func isFullRun() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.run") || strings.HasPrefix(a, "-test.bench") || strings.HasPrefix(a, "-test.short") || strings.HasPrefix(a, "-test.skip") {
			return false
		}
	}
	return true
}

// family describes one non-testset family for the lifecycle test.
type family struct {
	plural, key string
	data        m    // a valid revision payload
	deploy      bool // has /revisions/deploy
	resolve     bool // has /revisions/resolve
}

var families = []family{
	{plural: "workflows", key: "workflow", data: m{"uri": "svc:custom:hook:v0", "url": "https://hooks.example.com/run"}, deploy: true, resolve: true},
	{plural: "applications", key: "application", data: m{"uri": "svc:builtin:completion:v0"}, deploy: true, resolve: true},
	{plural: "evaluators", key: "evaluator", data: m{"uri": "svc:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "answer"}}, deploy: true, resolve: true},
	{plural: "environments", key: "environment", data: m{"references": m{}}, resolve: true},
	{plural: "queries", key: "query", data: m{"filtering": m{"operator": "and", "conditions": []any{}}}},
}

// TestFamilyLifecycles walks every git route of every family: artifact,
// variant and revision create, fetch, edit, archive, unarchive, query,
// fork, log, retrieve, and the simple surface.
func TestFamilyLifecycles(t *testing.T) {
	s := newServer(t)
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "deploy-target"}})
	for _, f := range families {
		t.Run(f.plural, func(t *testing.T) {
			p, k := "/"+f.plural, f.key
			a := obj(t, s.ok(t, "POST", p, m{k: m{"slug": k + "-life", "name": "Life", "flags": m{}}}), k)
			id := str(a["id"])
			assert.Equal(t, id, obj(t, s.ok(t, "GET", p+"/"+id, nil), k)["id"])
			assert.Equal(t, "edited", obj(t, s.ok(t, "PUT", p+"/"+id, m{k: m{"id": id, "name": "Life", "description": "edited", "flags": m{}}}), k)["description"])
			assert.Contains(t, obj(t, s.ok(t, "POST", p+"/"+id+"/archive", nil), k), "deleted_at")
			assert.NotContains(t, obj(t, s.ok(t, "POST", p+"/"+id+"/unarchive", nil), k), "deleted_at")
			assert.GreaterOrEqual(t, s.ok(t, "POST", p+"/query", m{k + "_refs": []any{m{"id": id}}})["count"], float64(1))

			vk := k + "_variant"
			v := obj(t, s.ok(t, "POST", p+"/variants", m{vk: m{"slug": k + "-life-main", k + "_id": id}}), vk)
			vid := str(v["id"])
			assert.Equal(t, vid, obj(t, s.ok(t, "GET", p+"/variants/"+vid, nil), vk)["id"])
			assert.Equal(t, "d", obj(t, s.ok(t, "PUT", p+"/variants/"+vid, m{vk: m{"id": vid, "description": "d"}}), vk)["description"])
			s.ok(t, "POST", p+"/variants/"+vid+"/archive", nil)
			s.ok(t, "POST", p+"/variants/"+vid+"/unarchive", nil)
			assert.Equal(t, float64(1), s.ok(t, "POST", p+"/variants/query", m{k + "_refs": []any{m{"id": id}}})["count"])

			rk := k + "_revision"
			r0 := obj(t, s.ok(t, "POST", p+"/revisions", m{rk: m{k + "_id": id, k + "_variant_id": vid}}), rk)
			assert.Equal(t, "0", r0["version"])
			r1 := obj(t, s.ok(t, "POST", p+"/revisions/commit", m{rk: m{k + "_id": id, k + "_variant_id": vid, "message": "one", "data": f.data}}), rk)
			assert.Equal(t, "1", r1["version"])
			rid := str(r1["id"])
			assert.Equal(t, rid, obj(t, s.ok(t, "GET", p+"/revisions/"+rid, nil), rk)["id"])
			assert.Equal(t, "n", obj(t, s.ok(t, "PUT", p+"/revisions/"+rid, m{rk: m{"id": rid, "name": "n"}}), rk)["name"])
			s.ok(t, "POST", p+"/revisions/"+rid+"/archive", nil)
			s.ok(t, "POST", p+"/revisions/"+rid+"/unarchive", nil)
			assert.Equal(t, float64(2), s.ok(t, "POST", p+"/revisions/query", m{k + "_variant_refs": []any{m{"id": vid}}})["count"])
			assert.Equal(t, float64(2), s.ok(t, "POST", p+"/revisions/log", m{k + "_revisions": m{k + "_variant_id": vid}})["count"])
			got := s.ok(t, "POST", p+"/revisions/retrieve", m{vk + "_ref": m{"id": vid}})
			assert.Equal(t, rid, obj(t, got, rk)["id"])
			if f.resolve {
				s.ok(t, "POST", p+"/revisions/resolve", m{k + "_revision_ref": m{"id": rid}})
			}
			fork := obj(t, s.ok(t, "POST", p+"/variants/fork", m{vk: m{"slug": k + "-life-fork"}, vk + "_ref": m{"id": vid}}), vk)
			assert.Equal(t, float64(2), s.ok(t, "POST", p+"/revisions/log", m{k + "_revisions": m{k + "_variant_id": fork["id"]}})["count"])
			if f.deploy {
				s.ok(t, "POST", p+"/revisions/deploy", m{k + "_revision_ref": m{"id": rid}, "environment_ref": m{"slug": "deploy-target"}})
				back := s.ok(t, "POST", p+"/revisions/retrieve", m{"environment_ref": m{"slug": "deploy-target"}, k + "_ref": m{"slug": k + "-life"}})
				assert.Equal(t, rid, obj(t, back, rk)["id"], "deploy then retrieve by environment")
			}

			sp := "/simple/" + f.plural
			simple := obj(t, s.ok(t, "POST", sp, m{k: m{"slug": k + "-simple", "name": "Simple", "data": f.data}}), k)
			sid := str(simple["id"])
			assert.Equal(t, sid, obj(t, s.ok(t, "GET", sp+"/"+sid, nil), k)["id"])
			s.ok(t, "PUT", sp+"/"+sid, m{k: m{"id": sid, "name": "Simple", "description": "edited", "data": f.data}})
			s.ok(t, "POST", sp+"/"+sid+"/archive", nil)
			s.ok(t, "POST", sp+"/"+sid+"/unarchive", nil)
			assert.GreaterOrEqual(t, s.ok(t, "POST", sp+"/query", m{k + "_refs": []any{m{"id": sid}}})["count"], float64(1))
		})
	}
	// The catalog routes of each role, with a template that has presets.
	for _, c := range []struct{ plural, template, preset string }{
		{"evaluators", "auto_regex_test", "starts_with"},
		{"applications", "feedback", "quality-rating"},
		{"workflows", "feedback", "quality-rating"},
	} {
		base := "/" + c.plural + "/catalog"
		assert.Positive(t, s.ok(t, "GET", base+"/types", nil)["count"], c.plural)
		assert.Positive(t, s.ok(t, "GET", base+"/templates", nil)["count"], c.plural)
		assert.Equal(t, c.template, obj(t, s.ok(t, "GET", base+"/templates/"+c.template, nil), "template")["key"])
		assert.Positive(t, s.ok(t, "GET", base+"/templates/"+c.template+"/presets", nil)["count"], c.plural)
		assert.Equal(t, c.preset, obj(t, s.ok(t, "GET", base+"/templates/"+c.template+"/presets/"+c.preset, nil), "preset")["key"])
	}
	r := s.do(t, "GET", "/evaluators/catalog/types/message", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
}
