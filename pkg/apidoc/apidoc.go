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
	"fmt"
	"html/template"
	"sort"
	"strings"
	"sync"
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

func load(service string) (fragment, error) {
	var f fragment
	b, err := fragments.ReadFile(service + ".json")
	if err != nil {
		return f, fmt.Errorf("read %s fragment: %w", service, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("parse %s fragment: %w", service, err)
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
		tags = append(tags, f.Tags...)
		for p, ops := range f.Paths {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("path %s is in two fragments", p)
			}
			paths[p] = ops
		}
		for kind, items := range f.Components {
			if components[kind] == nil {
				components[kind] = map[string]any{}
			}
			for name, v := range items {
				components[kind][name] = v
			}
		}
	}
	d := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Assay API",
			"version":     "0.1.0",
			"description": "Versioned testsets, evaluators and applications, a hosted runtime, evaluations and OpenTelemetry tracing. Wire-compatible with the Agenta API.",
		},
		"servers":    []map[string]any{{"url": "/"}},
		"security":   []map[string]any{{"ApiKey": []string{}}},
		"tags":       tags,
		"paths":      paths,
		"components": components,
	}
	return json.MarshalIndent(d, "", "  ")
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

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Assay API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;margin-top:2.5rem}
.op{margin:1rem 0;padding:.6rem .8rem;border-left:4px solid #888;background:#fafafa}
.m{display:inline-block;min-width:4.5rem;font-weight:700;font-family:monospace}
.GET{border-color:#2b7}.POST{border-color:#27c}.PUT,.PATCH{border-color:#c80}.DELETE{border-color:#c33}
code{background:#eee;padding:0 .2rem}
</style></head><body>
<h1>Assay API</h1>
<p>All paths are also served without the <code>/api</code> prefix and with or without a trailing slash.
Authenticate with <code>Authorization: ApiKey &lt;key&gt;</code>; admin paths take <code>Authorization: Access &lt;admin key&gt;</code>.
The machine-readable document is at <a href="/api/openapi.json">/api/openapi.json</a>.</p>
{{range .}}<h2>{{.Tag}}</h2>
{{range .Ops}}<div class="op {{.Method}}"><span class="m">{{.Method}}</span> <code>{{.Path}}</code>
{{if .Summary}}<div><b>{{.Summary}}</b></div>{{end}}{{if .Description}}<div>{{.Description}}</div>{{end}}
{{if .Responses}}<div>Responses: {{range $i, $r := .Responses}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}</div>{{end}}</div>
{{end}}{{end}}</body></html>`))

type pageOp struct {
	Method, Path, Summary, Description string
	Responses                          []string
}

type pageSection struct {
	Tag string
	Ops []pageOp
}

// HTML renders the docs page from the merged document.
func HTML() ([]byte, error) {
	raw, err := Document()
	if err != nil {
		return nil, err
	}
	var d struct {
		Tags  []struct{ Name string } `json:"tags"`
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
	order := []string{}
	for _, t := range d.Tags {
		order = append(order, t.Name)
	}
	order = append(order, "Other")
	for _, t := range order {
		ops := byTag[t]
		if len(ops) == 0 {
			continue
		}
		sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
		sections = append(sections, pageSection{Tag: t, Ops: ops})
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, sections); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
