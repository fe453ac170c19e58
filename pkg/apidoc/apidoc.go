// Package apidoc assembles the platform's one OpenAPI 3.1 document from a
// fragment per service and renders a readable docs page from it.
//
// Fragments live here, not in the services, so the gateway serves the whole
// document without calling anyone; each service has a test that its echo
// routes and its fragment list the same operations.
package apidoc

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
)

//go:embed *.json
var fragments embed.FS

// Services whose fragments make up the document, in page order.
var Services = []string{"gateway", "registry", "tracing", "runtime"}

type fragment struct {
	Tags       []map[string]any          `json:"tags,omitempty"`
	Paths      map[string]map[string]any `json:"paths"`
	Components map[string]map[string]any `json:"components,omitempty"`
}

// load reads a service's fragment: <service>.json, merged with its parts
// <service>.<part>.json (one per surface, so surfaces are documented side
// by side without editing one file); a path or component defined twice is
// an error.
func load(service string) (fragment, error) {
	var f fragment
	names, err := fs.Glob(fragments, service+".*.json")
	if err != nil {
		return f, err
	}
	names = append([]string{service + ".json"}, names...)
	for _, name := range names {
		if name == service+".types.json" {
			continue
		}
		b, err := fragments.ReadFile(name)
		if err != nil {
			return f, fmt.Errorf("read %s fragment: %w", service, err)
		}
		var part fragment
		if err := json.Unmarshal(b, &part); err != nil {
			return f, fmt.Errorf("parse %s: %w", name, err)
		}
		if f.Paths == nil {
			f = part
			continue
		}
		f.Tags = append(f.Tags, part.Tags...)
		for p, ops := range part.Paths {
			if _, dup := f.Paths[p]; dup {
				return f, fmt.Errorf("%s: path %s is already documented", name, p)
			}
			f.Paths[p] = ops
		}
		for kind, defs := range part.Components {
			if f.Components == nil {
				f.Components = map[string]map[string]any{}
			}
			if f.Components[kind] == nil {
				f.Components[kind] = map[string]any{}
			}
			for k, v := range defs {
				if _, dup := f.Components[kind][k]; dup {
					return f, fmt.Errorf("%s: component %s is already defined", name, k)
				}
				f.Components[kind][k] = v
			}
		}
	}
	return f, nil
}

var (
	once   sync.Once
	doc    []byte
	docErr error
)

// Document returns the merged OpenAPI document as JSON.
func Document() ([]byte, error) {
	once.Do(func() { doc, docErr = build() })
	return doc, docErr
}

func build() ([]byte, error) {
	paths := map[string]map[string]any{}
	g := newGen()
	errRef := g.schema(reflect.TypeOf(httpx.ErrorBody{}))
	fieldRef := g.schema(reflect.TypeOf(errs.FieldError{}))
	if g.err != nil {
		return nil, g.err
	}
	// detail is `any` in Go; document the three shapes httpx renders.
	g.defs["ErrorBody"].(map[string]any)["properties"] = map[string]any{"detail": map[string]any{
		"description": "A message, an object with a message and a code, or (422) a list of field errors.",
		"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "object"},
			map[string]any{"type": "array", "items": fieldRef}},
	}}
	g.defs["ErrorBody"].(map[string]any)["required"] = []string{"detail"}
	schemas := g.defs
	components := map[string]map[string]any{
		"securitySchemes": {
			"ApiKey": map[string]any{"type": "apiKey", "in": "header", "name": "Authorization",
				"description": "`ApiKey <prefix>.<secret>`: a project API key."},
			"Access": map[string]any{"type": "apiKey", "in": "header", "name": "Authorization",
				"description": "`Access <admin key>`: only on /api/admin/ paths."},
		},
	}
	var tags []map[string]any
	for _, s := range Services {
		f, err := load(s)
		if err != nil {
			return nil, err
		}
		types, err := loadTypes(s)
		if err != nil {
			return nil, err
		}
		for name, v := range types.Schemas {
			if prev, ok := schemas[name]; ok && !sameJSON(prev, v) {
				return nil, fmt.Errorf("schema %s differs between fragments", name)
			}
			schemas[name] = v
		}
		tags = append(tags, f.Tags...)
		used := 0
		for p, ops := range f.Paths {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("path %s is in two fragments", p)
			}
			for m, op := range ops {
				if o, ok := op.(map[string]any); ok && isMethod(m) {
					t, bound := types.Operations[strings.ToUpper(m)+" "+p]
					if bound {
						used++
						applyTypes(o, t)
					}
				}
			}
			paths[p] = ops
		}
		if used != len(types.Operations) {
			return nil, fmt.Errorf("%s.types.json binds %d operations the fragment does not list", s, len(types.Operations)-used)
		}
		for kind, items := range f.Components {
			if kind == "schemas" {
				for name, v := range items {
					if _, dup := schemas[name]; dup {
						return nil, fmt.Errorf("schema %s is both written and generated", name)
					}
					schemas[name] = v
				}
				continue
			}
			if components[kind] == nil {
				components[kind] = map[string]any{}
			}
			for name, v := range items {
				components[kind][name] = v
			}
		}
	}
	components["schemas"] = schemas
	dropInternal(paths, &tags)
	nameSetters(paths)
	nameSetters(schemas)
	if err := complete(paths, errRef); err != nil {
		return nil, err
	}
	pruneSchemas(schemas, paths)
	d := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Assay API",
			"version": "0.1.0",
			"description": "Versioned testsets, evaluators and applications, a hosted runtime, evaluations and OpenTelemetry tracing. Wire-compatible with the Agenta API.\n\n" +
				"Paths are documented in their canonical form; every path is also served without the `/api` prefix and with a trailing slash, as the compatible platform's clients send them.",
			"license": map[string]any{"name": "Proprietary", "identifier": "LicenseRef-Assay"},
		},
		"servers":    []map[string]any{{"url": "/"}},
		"security":   []map[string]any{{"ApiKey": []string{}}},
		"tags":       tags,
		"paths":      paths,
		"components": components,
	}
	return json.MarshalIndent(d, "", "  ")
}

// dropInternal removes the service-to-service routes (/internal/..., the
// registry's /api/internal/...) and the tags only they use: the gateway
// does not proxy them, so they are no part of the public API. Their
// fragments stay, as the services' route tests compare them with the
// routes they serve.
func dropInternal(paths map[string]map[string]any, tags *[]map[string]any) {
	internal := map[string]bool{}
	for p, ops := range paths {
		if !strings.HasPrefix(p, "/internal/") && !strings.HasPrefix(p, "/api/internal/") {
			continue
		}
		for _, op := range ops {
			if o, ok := op.(map[string]any); ok {
				for _, t := range asStrings(o["tags"]) {
					internal[t] = true
				}
			}
		}
		delete(paths, p)
	}
	for _, ops := range paths {
		for _, op := range ops {
			if o, ok := op.(map[string]any); ok {
				for _, t := range asStrings(o["tags"]) {
					delete(internal, t)
				}
			}
		}
	}
	kept := (*tags)[:0]
	for _, t := range *tags {
		if name, _ := t["name"].(string); !internal[name] {
			kept = append(kept, t)
		}
	}
	*tags = kept
}

func asStrings(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = l
	}
	return out
}

// pruneSchemas removes the component schemas no operation reaches, the
// types only the dropped internal routes used.
func pruneSchemas(schemas map[string]any, paths map[string]map[string]any) {
	ref := regexp.MustCompile(`"#/components/schemas/([^"]+)"`)
	reached := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		b, _ := json.Marshal(v)
		for _, m := range ref.FindAllSubmatch(b, -1) {
			if name := string(m[1]); !reached[name] {
				reached[name] = true
				visit(schemas[name])
			}
		}
	}
	visit(paths)
	for name := range schemas {
		if !reached[name] {
			delete(schemas, name)
		}
	}
}

// nameSetters gives a property "set_<x>" of an object that also has "<x>"
// (a testcase's set_id next to its id) its own Go name for code
// generators: ogen names the field SetID, which is also the name of the
// setter of ID, and the generated client does not compile.
func nameSetters(v any) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for name := range props {
				if rest, set := strings.CutPrefix(name, "set_"); set {
					if _, clash := props[rest]; clash {
						xp, _ := x["x-ogen-properties"].(map[string]any)
						if xp == nil {
							xp = map[string]any{}
							x["x-ogen-properties"] = xp
						}
						xp[name] = map[string]any{"name": "Set" + goName(rest) + "Value"}
					}
				}
			}
		}
		for _, e := range x {
			nameSetters(e)
		}
	case map[string]map[string]any:
		for _, e := range x {
			nameSetters(e)
		}
	case []any:
		for _, e := range x {
			nameSetters(e)
		}
	}
}

// goName is snake_case in CamelCase, with "id" as ID.
func goName(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "id" {
			b.WriteString("ID")
		} else if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

func isMethod(m string) bool {
	switch m {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return true
	}
	return false
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func loadTypes(service string) (typesFile, error) {
	var t typesFile
	b, err := fragments.ReadFile(service + ".types.json")
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil // a service without a JSON surface (runtime today)
	}
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("parse %s types: %w", service, err)
	}
	return t, nil
}

// applyTypes puts the generated schemas into an operation: the request body
// and the first 2xx response, keeping the fragment's descriptions.
func applyTypes(op map[string]any, t opTypes) {
	if t.Request != nil {
		rb, _ := op["requestBody"].(map[string]any)
		if rb == nil {
			rb = map[string]any{"required": true}
			op["requestBody"] = rb
		}
		rb["content"] = map[string]any{"application/json": map[string]any{"schema": t.Request}}
	}
	if t.Response != nil {
		rs, _ := op["responses"].(map[string]any)
		if rs == nil {
			rs = map[string]any{}
			op["responses"] = rs
		}
		code := ""
		for c := range rs {
			if strings.HasPrefix(c, "2") && (code == "" || c < code) {
				code = c
			}
		}
		if code == "" {
			code = "200"
			rs[code] = map[string]any{"description": "Success."}
		}
		r := rs[code].(map[string]any)
		r["content"] = map[string]any{"application/json": map[string]any{"schema": t.Response}}
	}
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// complete adds what every operation needs and the fragments leave to one
// place: a unique operationId, its declared path parameters, and the error
// responses the platform answers with (the shared error body).
func complete(paths map[string]map[string]any, errRef map[string]any) error {
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": errRef}}}
	}
	seen := map[string]string{}
	for p, ops := range paths {
		declared := map[string]bool{}
		for _, prm := range asList(ops["parameters"]) {
			if prm["in"] == "path" {
				declared[fmt.Sprint(prm["name"])] = true
			}
		}
		for m, raw := range ops {
			op, ok := raw.(map[string]any)
			if !ok || !isMethod(m) {
				continue
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				id = operationID(m, p)
				op["operationId"] = id
			}
			if other, dup := seen[id]; dup {
				return fmt.Errorf("operationId %s is on %s and %s %s", id, other, m, p)
			}
			seen[id] = m + " " + p
			params := asList(op["parameters"])
			opDeclared := map[string]bool{}
			for _, prm := range params {
				if prm["in"] == "path" {
					opDeclared[fmt.Sprint(prm["name"])] = true
				}
			}
			var all []any
			for _, prm := range params {
				all = append(all, prm)
			}
			for _, mm := range pathParam.FindAllStringSubmatch(p, -1) {
				if !declared[mm[1]] && !opDeclared[mm[1]] {
					all = append(all, map[string]any{"name": mm[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
				}
			}
			if len(all) > 0 {
				op["parameters"] = all
			}
			rs, _ := op["responses"].(map[string]any)
			if rs == nil {
				rs = map[string]any{}
				op["responses"] = rs
			}
			sec, hasSec := op["security"].([]any)
			public := hasSec && len(sec) == 0
			add := func(code, desc string) {
				if _, ok := rs[code]; !ok {
					rs[code] = errResp(desc)
				}
			}
			if !public {
				add("401", "Missing, unknown or expired credentials.")
				add("403", "The caller's role does not allow this operation.")
			}
			if op["requestBody"] != nil || m == "get" {
				add("422", "A field of the body or the query is invalid; detail lists each field with its location.")
			}
			if len(pathParam.FindAllString(p, -1)) > 0 {
				add("404", "Nothing with this id in the caller's project.")
			}
			for c, r := range rs {
				// fragment error responses without a body get the shared one
				if rr, ok := r.(map[string]any); ok && c[0] == '4' && rr["content"] == nil {
					rr["content"] = errResp("")["content"]
				}
			}
		}
	}
	return nil
}

func asList(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// operationID derives a stable camelCase id from the method and the path:
// POST /api/testsets/{testset_id}/archive -> postTestsetsByTestsetIdArchive.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api"), "/") {
		if seg == "" {
			continue
		}
		if strings.HasPrefix(seg, "{") {
			b.WriteString("By")
			seg = strings.Trim(seg, "{}")
		}
		for _, w := range strings.FieldsFunc(seg, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// Operation is one method on one path.
type Operation struct {
	Method string
	Path   string // OpenAPI form: /api/keys/{id}
}

// Operations lists the operations of one service's fragment, sorted.
func Operations(service string) ([]Operation, error) {
	f, err := load(service)
	if err != nil {
		return nil, err
	}
	var ops []Operation
	for p, methods := range f.Paths {
		for m := range methods {
			if m == "parameters" || m == "summary" || m == "description" {
				continue
			}
			ops = append(ops, Operation{Method: strings.ToUpper(m), Path: p})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops, nil
}

// Routes lists one service's documented operations as the echo routes that
// serve them ("POST /testsets/:id"), sorted: each service's routes test
// compares them with what it registers.
func Routes(service string) ([]string, error) {
	ops, err := Operations(service)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ops))
	for _, op := range ops {
		out = append(out, op.Method+" "+RoutePath(op.Path))
	}
	sort.Strings(out)
	return out, nil
}

// RoutePath turns an OpenAPI path into the canonical echo route that serves
// it: no /api prefix, no trailing slash, {id} as :id.
func RoutePath(openapiPath string) string {
	p := strings.TrimPrefix(openapiPath, "/api")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// RedocVersion is the vendored Redoc release: assets/redoc.standalone.js is
// bundles/redoc.standalone.js of the npm package redoc@2.5.4 (MIT, licence
// beside it), committed so the docs page works offline and pinned.
const RedocVersion = "2.5.4"

// AssetPath is where the gateway serves the Redoc bundle.
const AssetPath = "/api/docs/redoc.standalone.js"

//go:embed assets/redoc.standalone.js
var vendoredRedocJS []byte

// redocLogo is the one thing the vendored bundle fetches from elsewhere:
// the Redocly logo of its "API docs by Redocly" footer, an <img> from
// Redocly's CDN. The bundle is served without it (RedocJS) so the docs
// pages make no request but to the gateway (the attribution's text and
// link stay); TestRedocJSFetchesNothingElsewhere checks it is gone.
const redocLogo = `n.createElement("img",{alt:"redocly logo",onError:()=>t(!1),src:"https://cdn.redoc.ly/redoc/logo-mini.svg"})`

var redocJS = bytes.Replace(vendoredRedocJS, []byte(redocLogo), []byte("null"), 1)

// RedocJS returns the vendored Redoc bundle, without its CDN logo.
func RedocJS() []byte { return redocJS }

// The pages load only same-origin URLs: Redoc from the gateway, the
// document from /api/openapi.json.
//
// The index draws at once without JavaScript: the tags, each with its
// operation count, linked to a page of its own. Redoc over the whole
// document (hundreds of paths) took seconds to draw on a loaded machine,
// over one tag it draws a few dozen operations; "all" keeps the single page.
// The server-rendered operation list stays as the <noscript> fallback.
var indexPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Assay API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;margin-top:2.5rem}
ul.tags{list-style:none;padding:0}
ul.tags li{margin:.5rem 0}
ul.tags a{font-weight:600}
.n{color:#666;margin-left:.4rem}
.d{color:#444;display:block}
.op{margin:1rem 0;padding:.6rem .8rem;border-left:4px solid #888;background:#fafafa}
.m{display:inline-block;min-width:4.5rem;font-weight:700;font-family:monospace}
.GET{border-color:#2b7}.POST{border-color:#27c}.PUT,.PATCH{border-color:#c80}.DELETE{border-color:#c33}
code{background:#eee;padding:0 .2rem}
</style></head><body>
<h1>Assay API</h1>
<p>All paths are also served without the <code>/api</code> prefix and with or without a trailing slash.
Authenticate with <code>Authorization: ApiKey &lt;key&gt;</code>; admin paths take <code>Authorization: Access &lt;admin key&gt;</code>.
The machine-readable document is at <a href="/api/openapi.json">/api/openapi.json</a>.</p>
<p>Pick a section: each opens the reference of its operations.
<a href="/api/docs?tag=all">Every operation on one page</a> ({{.Total}}) takes much longer to draw.</p>
<ul class="tags">
{{range .Sections}}<li><a href="/api/docs?tag={{.Tag}}">{{.Tag}}</a> <span class="n">{{len .Ops}} operation{{if ne (len .Ops) 1}}s{{end}}</span>{{if .Description}}<span class="d">{{.Description}}</span>{{end}}</li>
{{end}}</ul>
<noscript>
{{range .Sections}}<h2>{{.Tag}}</h2>
{{range .Ops}}<div class="op {{.Method}}"><span class="m">{{.Method}}</span> <code>{{.Path}}</code>
{{if .Summary}}<div><b>{{.Summary}}</b></div>{{end}}{{if .Description}}<div>{{.Description}}</div>{{end}}
{{if .Responses}}<div>Responses: {{range $i, $r := .Responses}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}</div>{{end}}</div>
{{end}}{{end}}</noscript></body></html>`))

// tagPage is Redoc over the operations of one tag (or all): the page reads
// the whole document and keeps that tag's operations before Redoc parses
// it, so no second document route is needed.
var tagPage = template.Must(template.New("tag").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Assay API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{margin:0}
nav.docs{font:14px/1.5 system-ui,sans-serif;padding:.5rem 1rem;border-bottom:1px solid #ddd;background:#fafafa;display:flex;gap:1rem;align-items:center}
</style></head><body>
<nav class="docs"><a href="/api/docs">← All sections</a><b>{{.Title}}</b><a href="/api/openapi.json">openapi.json</a></nav>
<div id="redoc" data-testid="redoc"></div>
<script src="{{.Asset}}"></script>
<script>
const tag = {{.Tag}};
fetch("/api/openapi.json").then((r) => r.json()).then((doc) => {
  if (tag !== "all") {
    const paths = {};
    for (const [p, item] of Object.entries(doc.paths || {})) {
      const kept = {};
      let ops = 0;
      for (const [k, v] of Object.entries(item)) {
        const isOp = v && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.tags);
        if (!isOp) kept[k] = v;
        else if (v.tags.includes(tag)) (kept[k] = v), ops++;
      }
      if (ops) paths[p] = kept;
    }
    doc.paths = paths;
    doc.tags = (doc.tags || []).filter((t) => t.name === tag);
  }
  Redoc.init(doc, { expandResponses: "200", pathInMiddlePanel: true }, document.getElementById("redoc"));
}).catch((e) => { document.getElementById("redoc").textContent = "Could not load /api/openapi.json: " + e; });
</script>
</body></html>`))

type pageOp struct {
	Method, Path, Summary, Description string
	Responses                          []string
}

type pageSection struct {
	Tag, Description string
	Ops              []pageOp
}

// firstSentence shortens a tag's description to its first sentence for
// the index.
func firstSentence(s string) string {
	s = strings.ReplaceAll(s, "`", "") // Markdown code marks, shown raw in HTML
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// AllTags is the docs page's tag for every operation on one page.
const AllTags = "all"

// HTML renders a docs page: with no tag the index of the document's tags,
// with a tag Redoc over its operations (AllTags: every operation). An
// unknown tag is a 404 naming it.
func HTML(tag string) ([]byte, error) {
	raw, err := Document()
	if err != nil {
		return nil, err
	}
	var d struct {
		Tags []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tags"`
		Paths map[string]map[string]struct {
			Summary     string                     `json:"summary"`
			Description string                     `json:"description"`
			Tags        []string                   `json:"tags"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	byTag := map[string][]pageOp{}
	for p, methods := range d.Paths {
		for m, op := range methods {
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			codes := make([]string, 0, len(op.Responses))
			for c := range op.Responses {
				codes = append(codes, c)
			}
			sort.Strings(codes)
			byTag[tag] = append(byTag[tag], pageOp{Method: strings.ToUpper(m), Path: p, Summary: op.Summary, Description: op.Description, Responses: codes})
		}
	}
	var sections []pageSection
	order := []pageSection{}
	for _, t := range d.Tags {
		order = append(order, pageSection{Tag: t.Name, Description: firstSentence(t.Description)})
	}
	order = append(order, pageSection{Tag: "Other"})
	total := 0
	for _, sec := range order {
		ops := byTag[sec.Tag]
		if len(ops) == 0 {
			continue
		}
		sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
		sec.Ops = ops
		sections = append(sections, sec)
		total += len(ops)
	}
	var buf bytes.Buffer
	if tag == "" {
		err = indexPage.Execute(&buf, map[string]any{"Sections": sections, "Total": total})
		return buf.Bytes(), err
	}
	title := "All operations"
	if tag != AllTags {
		if len(byTag[tag]) == 0 {
			return nil, errs.Message(errs.NotFound, "apidoc.unknown_tag",
				fmt.Sprintf("no section %q in the API document: /api/docs lists them", tag), map[string]any{"tag": tag})
		}
		title = tag
	}
	err = tagPage.Execute(&buf, map[string]any{"Asset": AssetPath, "Tag": tag, "Title": title})
	return buf.Bytes(), err
}
