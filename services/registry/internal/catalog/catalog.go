// Package catalog is the built-in, read-only catalog of workflow templates
// (with their presets) and of the JSON Schema types their parameters use.
// It changes with the release, never at run time. The structure follows the
// compatible platform's catalog; the prompts, descriptions and default code are ours.
package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed templates.json
var templatesJSON []byte

//go:embed types.json
var typesJSON []byte

// Flags are a template's or preset's role and listing flags.
type Flags struct {
	IsApplication bool `json:"is_application"`
	IsEvaluator   bool `json:"is_evaluator"`
	IsSnippet     bool `json:"is_snippet"`
	IsArchived    bool `json:"is_archived"`
	IsRecommended bool `json:"is_recommended"`
}

// Template is one catalog entry; Data holds uri, schemas and parameters.
type Template struct {
	Key         string          `json:"key"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Categories  []string        `json:"categories"`
	Flags       Flags           `json:"flags"`
	Data        json.RawMessage `json:"data"`
	Presets     []Template      `json:"presets,omitempty"`
}

// TemplateData is the decoded data of a template.
type TemplateData struct {
	URI        string                     `json:"uri"`
	Schemas    map[string]json.RawMessage `json:"schemas,omitempty"`
	Parameters json.RawMessage            `json:"parameters,omitempty"`
}

// Type is one JSON Schema type of the catalog (message, model, ...).
type Type struct {
	Key        string          `json:"key"`
	JSONSchema json.RawMessage `json:"json_schema"`
}

// Harness is an agent harness the runtime can drive.
type Harness struct {
	Key          string   `json:"key"`
	Capabilities []string `json:"capabilities"`
}

// Catalog holds the templates with URIs rewritten to our provider.
type Catalog struct {
	templates []Template
	byKey     map[string]*Template
	types     []Type
	provider  string
}

// New loads the embedded catalog, answering URIs with provider ("svc").
func New(provider string) (*Catalog, error) {
	c := &Catalog{byKey: map[string]*Template{}, provider: provider}
	// The source data names the other platform's provider; ours replaces it
	// before anything is decoded, so every URI a client sees is ours.
	raw := strings.ReplaceAll(string(templatesJSON), `"agenta:`, `"`+provider+`:`)
	if err := json.Unmarshal([]byte(raw), &c.templates); err != nil {
		return nil, fmt.Errorf("decode catalog templates: %w", err)
	}
	for i := range c.templates {
		t := &c.templates[i]
		if t.Categories == nil {
			t.Categories = []string{}
		}
		for j := range t.Presets {
			p := &t.Presets[j]
			// Preset rules: role flags come from the template, categories
			// fall back to it, data defaults to the template uri.
			p.Flags.IsApplication, p.Flags.IsEvaluator, p.Flags.IsSnippet = t.Flags.IsApplication, t.Flags.IsEvaluator, t.Flags.IsSnippet
			if len(p.Categories) == 0 {
				p.Categories = t.Categories
			}
			if len(p.Data) == 0 {
				p.Data, _ = json.Marshal(map[string]any{"uri": t.URI()})
			}
		}
		c.byKey[t.Key] = t
	}
	if err := json.Unmarshal(typesJSON, &c.types); err != nil {
		return nil, fmt.Errorf("decode catalog types: %w", err)
	}
	return c, nil
}

// MustNew is New for a provider known to be valid.
func MustNew(provider string) *Catalog {
	c, err := New(provider)
	if err != nil {
		panic(err)
	}
	return c
}

// URI returns the template's handler URI.
func (t *Template) URI() string {
	var d TemplateData
	_ = json.Unmarshal(t.Data, &d)
	return d.URI
}

// Decoded returns the template's data decoded.
func (t *Template) Decoded() TemplateData {
	var d TemplateData
	_ = json.Unmarshal(t.Data, &d)
	return d
}

// Role selects templates by role; nil fields do not filter.
type Role struct {
	IsApplication, IsEvaluator, IsSnippet *bool
}

func (r Role) match(f Flags) bool {
	return (r.IsApplication == nil || *r.IsApplication == f.IsApplication) &&
		(r.IsEvaluator == nil || *r.IsEvaluator == f.IsEvaluator) &&
		(r.IsSnippet == nil || *r.IsSnippet == f.IsSnippet)
}

// Templates lists the templates of a role, without presets; archived ones
// only when asked.
func (c *Catalog) Templates(role Role, includeArchived bool) []Template {
	out := []Template{}
	for _, t := range c.templates {
		if !role.match(t.Flags) || t.Flags.IsArchived && !includeArchived {
			continue
		}
		t.Presets = nil
		out = append(out, t)
	}
	return out
}

// Template returns the template with key in the role (archived included),
// without presets; nil if unknown.
func (c *Catalog) Template(role Role, key string) *Template {
	t, ok := c.byKey[key]
	if !ok || !role.match(t.Flags) {
		return nil
	}
	cp := *t
	cp.Presets = nil
	return &cp
}

// Presets lists the presets of a template; nil if the template is unknown.
func (c *Catalog) Presets(role Role, key string, includeArchived bool) []Template {
	t, ok := c.byKey[key]
	if !ok || !role.match(t.Flags) {
		return []Template{}
	}
	out := []Template{}
	for _, p := range t.Presets {
		if p.Flags.IsArchived && !includeArchived {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Preset returns one preset of a template, or nil.
func (c *Catalog) Preset(role Role, key, preset string) *Template {
	for _, p := range c.Presets(role, key, true) {
		if p.Key == preset {
			return &p
		}
	}
	return nil
}

// ByKey returns the template (with presets) for a URI key, or nil.
func (c *Catalog) ByKey(key string) *Template { return c.byKey[key] }

// Types lists the catalog's JSON Schema types.
func (c *Catalog) Types() []Type { return c.types }

// Type returns one type, or nil.
func (c *Catalog) Type(key string) *Type {
	for i := range c.types {
		if c.types[i].Key == key {
			return &c.types[i]
		}
	}
	return nil
}

// harnesses are the agent harnesses the runtime knows; the capability names
// are ours (the compatible platform lists only the keys).
var harnesses = []Harness{
	{Key: "pi_core", Capabilities: []string{"tools", "files", "loop"}},
	{Key: "pi_agenta", Capabilities: []string{"tools", "files", "loop", "references"}},
	{Key: "claude", Capabilities: []string{"tools", "files", "loop", "skills"}},
	{Key: "codex", Capabilities: []string{"tools", "files", "loop"}},
}

// Harnesses lists the agent harnesses.
func (c *Catalog) Harnesses() []Harness { return harnesses }

// Harness returns one harness, or nil.
func (c *Catalog) Harness(key string) *Harness {
	for i := range harnesses {
		if harnesses[i].Key == key {
			return &harnesses[i]
		}
	}
	return nil
}
