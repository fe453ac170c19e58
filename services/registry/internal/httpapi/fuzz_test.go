package httpapi_test

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
)

// registryBound is the allocation budget of one request through the real
// HTTP stack and PostgreSQL client; the fixed part covers the connections'
// buffers and a response listing the fixtures.
var registryBound = fuzzbound.Bound{PerByte: 4096, Fixed: 32 << 20}

// fuzzFamily is an artifact family as the routes name it.
type fuzzFamily struct {
	plural, key string
	data        string // a valid revision payload (JSON)
}

var fuzzFamilies = []fuzzFamily{
	{"workflows", "workflow", `{"uri":"svc:custom:hook:v0","url":"https://hooks.example.com/run"}`},
	{"applications", "application", `{"uri":"svc:builtin:completion:v0"}`},
	{"evaluators", "evaluator", `{"uri":"svc:builtin:auto_exact_match:v0","parameters":{"correct_answer_key":"answer"}}`},
	{"environments", "environment", `{"references":{}}`},
	{"queries", "query", `{"filtering":{"operator":"and","conditions":[]}}`},
	{"testsets", "testset", `{"testcases":[{"data":{"question":"2+2?","answer":"4"}},{"data":{"question":"x","answer":"y"}}]}`},
}

// writeRoutes is every POST, PUT and PATCH route of the registry, from
// echo's own table, so a route added later is fuzzed without a change here.
func writeRoutes(t testing.TB) []string {
	var out []string
	for _, r := range httpapi.Routes(&testing.T{}) {
		if m, _, _ := strings.Cut(r, " "); m == "POST" || m == "PUT" || m == "PATCH" {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no write routes")
	}
	return out
}

// familyOf is the family a route path belongs to, and whether the path is
// under /simple.
func familyOf(path string) (fuzzFamily, bool) {
	p := strings.TrimPrefix(path, "/")
	simple := strings.HasPrefix(p, "simple/")
	p = strings.TrimPrefix(p, "simple/")
	first, _, _ := strings.Cut(p, "/")
	for _, f := range simpleEvalFuzzFamilies {
		if simple && f.plural == "simple-"+first {
			return f, simple
		}
	}
	if first == "evaluations" || strings.HasPrefix(p, "internal/evaluations/") {
		return evalFamily, false
	}
	for _, f := range fuzzFamilies {
		if f.plural == first {
			return f, simple
		}
	}
	return fuzzFamilies[len(fuzzFamilies)-1], simple // /testcases/query
}

// seedBodies are valid bodies for a route, with $ID, $VID, $RID and $SID
// standing for the family's fixture artifact, variant, revision and simple
// entity.
func seedBodies(route string) []string {
	method, path, _ := strings.Cut(route, " ")
	f, simple := familyOf(path)
	k := f.key
	var valid []string
	switch {
	case strings.HasPrefix(path, "/simple/evaluations"), strings.HasPrefix(path, "/simple/queues"):
		valid = simpleEvalSeedBodies(method, path)
	case strings.HasPrefix(path, "/secrets"): // the vault, not a family
		valid = []string{`{"header":{"name":"Fuzz"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-fz"}}}}`,
			`{"secret":{"kind":"custom_provider","data":{"kind":"custom","provider":{"url":"http://127.0.0.1:11434/v1","extras":{"X-A":"b"}},"models":[{"slug":"m"}],"provider_slug":"fz"}}}`}
	case f.plural == evalFamily.plural:
		valid = evalSeeds(method, path)
	case strings.HasPrefix(path, "/testcases/"):
		valid = []string{`{"testset_revision_ref":{"id":"$RID"},"windowing":{"limit":2}}`, `{"testset_id":"$ID"}`, `{"testcase_ids":["$ID"]}`}
	case strings.HasSuffix(path, "/archive"), strings.HasSuffix(path, "/unarchive"), strings.HasSuffix(path, "/guard"), strings.HasSuffix(path, "/unguard"), strings.HasSuffix(path, "/download"):
		valid = []string{``, `{}`}
	case strings.HasSuffix(path, "/upload"):
		valid = []string{`{}`}
	case simple && strings.HasSuffix(path, "/query"):
		valid = []string{`{"` + k + `_refs":[{"id":"$SID"}]}`, `{"include_archived":true,"windowing":{"limit":1}}`}
	case simple && method == "POST":
		valid = []string{`{"` + k + `":{"slug":"fz-` + k + `","name":"Fuzz","description":"d","tags":{"t":"v"},"data":` + f.data + `}}`}
	case simple && method == "PUT":
		valid = []string{`{"` + k + `":{"id":"$SID","name":"Fuzz","description":"edited","data":` + f.data + `}}`}
	case strings.HasSuffix(path, "/variants/fork"):
		valid = []string{`{"` + k + `_variant":{"slug":"fz-fork"},"` + k + `_variant_ref":{"id":"$VID"}}`}
	case strings.HasSuffix(path, "/variants/query"):
		valid = []string{`{"` + k + `_refs":[{"id":"$ID"}]}`}
	case strings.HasSuffix(path, "/variants"):
		valid = []string{`{"` + k + `_variant":{"slug":"fz-v","` + k + `_id":"$ID"}}`}
	case strings.Contains(path, "/variants/"):
		valid = []string{`{"` + k + `_variant":{"id":"$VID","description":"d"}}`}
	case strings.HasSuffix(path, "/revisions/commit"):
		valid = []string{`{"` + k + `_revision":{"` + k + `_id":"$ID","` + k + `_variant_id":"$VID","message":"m","data":` + f.data + `}}`}
		if k == "testset" {
			valid = append(valid, `{"testset_revision_commit":{"testset_id":"$ID","testset_revision_id":"$RID","delta":{"columns":{"add":["note"],"replace":[["answer","a"]]},"rows":{"add":[{"data":{"a":"9"}}]}}}}`)
		}
	case strings.HasSuffix(path, "/revisions/log"):
		valid = []string{`{"` + k + `_revisions":{"` + k + `_variant_id":"$VID","depth":2}}`}
	case strings.HasSuffix(path, "/revisions/query"):
		valid = []string{`{"` + k + `_variant_refs":[{"id":"$VID"}]}`}
	case strings.HasSuffix(path, "/revisions/retrieve"):
		valid = []string{`{"` + k + `_variant_ref":{"id":"$VID"}}`, `{"environment_ref":{"slug":"fz-env"},"` + k + `_ref":{"id":"$ID"}}`}
	case strings.HasSuffix(path, "/revisions/resolve"):
		valid = []string{`{"` + k + `_revision_ref":{"id":"$RID"}}`}
	case strings.HasSuffix(path, "/revisions/deploy"):
		valid = []string{`{"` + k + `_revision_ref":{"id":"$RID"},"environment_ref":{"slug":"fz-env"}}`}
	case strings.HasSuffix(path, "/revisions"):
		valid = []string{`{"` + k + `_revision":{"` + k + `_id":"$ID","` + k + `_variant_id":"$VID"}}`}
	case strings.Contains(path, "/revisions/"):
		valid = []string{`{"` + k + `_revision":{"id":"$RID","name":"n","message":"m"}}`}
	case strings.HasSuffix(path, "/query"):
		valid = []string{`{"` + k + `_refs":[{"id":"$ID"}],"windowing":{"limit":1}}`, `{"` + k + `":{"name":"fu","tags":{"t":"v"}}}`}
	case method == "POST":
		valid = []string{`{"` + k + `":{"slug":"fz-a","name":"Fuzz","flags":{},"meta":{"m":1}}}`}
	default: // PUT /family/:id
		valid = []string{`{"` + k + `":{"id":"$ID","name":"Fuzz","description":"edited"}}`}
	}
	return valid
}

// hostileBodies are bodies of the wrong shape for any route: wrong types at
// the top and inside the envelope, deep nesting, long (storable) text.
func hostileBodies(route string) []string {
	_, path, _ := strings.Cut(route, " ")
	f, _ := familyOf(path)
	k := f.key
	long, _ := json.Marshal(strings.Repeat("long text ", 200))
	return []string{`[]`, `"str"`, `null`, `{"` + k + `":"str"}`, `{"` + k + `":[1]}`,
		`{"` + k + `":{"id":1,"slug":{},"name":[],"tags":"x","data":7}}`,
		`{"` + k + `":{"slug":"fz-deep","tags":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64) + `}}`,
		`{"` + k + `":{"slug":"fz-long","description":` + string(long) + `}}`}
}

// fixtures are the ids the placeholders stand for, per family.
type fixtures map[string]map[string]string

func (fx fixtures) fill(path string, body []byte) []byte {
	f, _ := familyOf(path)
	for ph, id := range fx[f.plural] {
		body = bytes.ReplaceAll(body, []byte(ph), []byte(id))
	}
	return body
}

// makeFixtures creates, per family, an artifact, a variant, a committed
// revision and a simple entity, plus the environment deploys target.
func makeFixtures(t *testing.T, s *server) fixtures {
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "fz-env"}})
	fx := fixtures{}
	for _, f := range fuzzFamilies {
		k := f.key
		var data any
		if err := json.Unmarshal([]byte(f.data), &data); err != nil {
			t.Fatal(err)
		}
		id := str(obj(t, s.ok(t, "POST", "/"+f.plural, m{k: m{"slug": "fx-" + k, "name": "Fixture"}}), k)["id"])
		vid := str(obj(t, s.ok(t, "POST", "/"+f.plural+"/variants", m{k + "_variant": m{"slug": "fx-" + k + "-main", k + "_id": id}}), k+"_variant")["id"])
		rid := str(obj(t, s.ok(t, "POST", "/"+f.plural+"/revisions/commit", m{k + "_revision": m{k + "_id": id, k + "_variant_id": vid, "message": "one", "data": data}}), k+"_revision")["id"])
		sid := str(obj(t, s.ok(t, "POST", "/simple/"+f.plural, m{k: m{"slug": "fx-simple-" + k, "name": "Simple", "data": data}}), k)["id"])
		fx[f.plural] = map[string]string{"$ID": id, "$VID": vid, "$RID": rid, "$SID": sid}
	}
	fx[evalFamily.plural] = makeEvalFixtures(t, s)
	makeSimpleEvalFixtures(t, s, fx)
	return fx
}

// FuzzRegistryBodies sends fuzzed JSON bodies to every POST, PUT and PATCH
// route of the registry over real HTTP, on real PostgreSQL, with fixtures
// each family's routes can name. The route is picked by name (any other
// string by its hash); a "?query" after it is kept when it parses. It
// fails on a 5xx, on an error body that is not {"detail": ...}, on a 2xx
// JSON answer that does not parse, and on allocation beyond registryBound.
func FuzzRegistryBodies(f *testing.F) {
	routes := writeRoutes(f)
	for i, r := range routes {
		for _, b := range seedBodies(r) {
			f.Add(r, []byte(b))
		}
		// One hostile body per route, in turn: each shape still meets
		// about 20 routes, and the seeds stay few enough for the short CI
		// run to get past its baseline.
		h := hostileBodies(r)
		f.Add(r, []byte(h[i%len(h)]))
	}
	f.Add("POST /simple/testsets/:id/download?file_type=csv&file_name=x.csv", []byte(``))
	f.Add("POST /simple/testsets?testset_id=0190f0a0-0000-7000-8000-000000000001", []byte(`{"testset":{"slug":"forced","data":{"testcases":[]}}}`))

	s := newServer(f)
	var once sync.Once
	var fx fixtures
	f.Fuzz(func(t *testing.T, route string, body []byte) {
		once.Do(func() { fx = makeFixtures(t, s) })
		name, rawQuery, _ := strings.Cut(route, "?")
		r := name
		if !containsString(routes, name) {
			h := fnv.New32a()
			h.Write([]byte(name))
			r = routes[h.Sum32()%uint32(len(routes))]
		}
		method, pattern, _ := strings.Cut(r, " ")
		path := fillPath(pattern, fx)
		if _, err := url.ParseQuery(rawQuery); err == nil && rawQuery != "" && !strings.ContainsAny(rawQuery, " #\x7f") && isPrintable(rawQuery) {
			path += "?" + rawQuery
		}
		body = fx.fill(pattern, body)
		var res resp
		registryBound.Check(t, len(body), func() {
			res = s.send(t, method, path, bytes.NewReader(body), "application/json")
		})
		if res.status >= 500 {
			t.Fatalf("%s %s answered %d to a client's body: %s\nbody: %.300q", method, path, res.status, res.body, body)
		}
		ct := res.header.Get("Content-Type")
		if res.status >= 300 {
			var e map[string]any
			if err := json.Unmarshal(res.body, &e); err != nil || e["detail"] == nil {
				t.Fatalf("%s %s answered %d without a JSON {\"detail\"} body (%s): %.300q", method, path, res.status, ct, res.body)
			}
		} else if strings.HasPrefix(ct, "application/json") && len(res.body) > 0 && !json.Valid(res.body) {
			t.Fatalf("%s %s answered %d with invalid JSON: %.300q", method, path, res.status, res.body)
		}
	})
}

// fillPath puts the family's fixture id in the route's :id.
func fillPath(pattern string, fx fixtures) string {
	if !strings.Contains(pattern, ":id") {
		return pattern
	}
	f, simple := familyOf(pattern)
	ph := "$ID"
	switch {
	case f.plural == evalFamily.plural:
		ph = evalPlaceholder(pattern)
	case simple:
		ph = "$SID"
	case strings.Contains(pattern, "/variants/"):
		ph = "$VID"
	case strings.Contains(pattern, "/revisions/"):
		ph = "$RID"
	}
	return strings.Replace(pattern, ":id", fx[f.plural][ph], 1)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isPrintable(s string) bool {
	for _, c := range s {
		if c < 0x20 {
			return false
		}
	}
	return true
}
