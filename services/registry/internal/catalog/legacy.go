package catalog

import (
	"encoding/json"
	"sort"
	"strings"
)

// LegacyTemplate is one entry of the legacy evaluator template list
// (GET /simple/evaluators/templates), which older clients read instead of
// the catalog. It is derived from the evaluator catalog, so the two never
// disagree: settings_template describes the parameter schema, presets
// become settings_presets.
type LegacyTemplate struct {
	Name               string                   `json:"name"`
	Key                string                   `json:"key"`
	DirectUse          bool                     `json:"direct_use"`
	SettingsPresets    []LegacyPreset           `json:"settings_presets,omitempty"`
	SettingsTemplate   map[string]LegacySetting `json:"settings_template"`
	OutputsSchema      json.RawMessage          `json:"outputs_schema,omitempty"`
	Description        string                   `json:"description,omitempty"`
	OSS                bool                     `json:"oss,omitempty"`
	RequiresLLMAPIKeys bool                     `json:"requires_llm_api_keys,omitempty"`
	Tags               []string                 `json:"tags"`
	Archived           bool                     `json:"archived,omitempty"`
}

// LegacyPreset is a named set of settings values.
type LegacyPreset struct {
	Key    string          `json:"key"`
	Name   string          `json:"name"`
	Values json.RawMessage `json:"values"`
}

// LegacySetting describes one parameter for a settings form.
type LegacySetting struct {
	Label       string `json:"label"`
	Type        string `json:"type"`
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
}

// llmKeys are the evaluators that call a model provider.
var llmKeys = map[string]bool{"auto_ai_critique": true, "auto_semantic_similarity": true}

// Legacy lists the evaluator templates in the legacy shape; archived ones
// only when asked.
func (c *Catalog) Legacy(includeArchived bool) []LegacyTemplate {
	t := true
	out := []LegacyTemplate{}
	for _, tpl := range c.Templates(Role{IsEvaluator: &t}, includeArchived) {
		d := tpl.Decoded()
		lt := LegacyTemplate{Name: tpl.Name, Key: tpl.Key, Description: tpl.Description, OSS: true,
			RequiresLLMAPIKeys: llmKeys[tpl.Key], Tags: append([]string{}, tpl.Categories...), Archived: tpl.Flags.IsArchived,
			OutputsSchema: d.Schemas["outputs"]}
		if lt.Name == "" {
			lt.Name = tpl.Key
		}
		lt.SettingsTemplate, lt.DirectUse = settings(d.Schemas["parameters"], d.Parameters)
		for _, p := range c.Presets(Role{IsEvaluator: &t}, tpl.Key, includeArchived) {
			pd := p.Decoded()
			if pd.Parameters == nil {
				continue // a preset of outputs only (feedback) has no settings
			}
			lt.SettingsPresets = append(lt.SettingsPresets, LegacyPreset{Key: p.Key, Name: p.Name, Values: pd.Parameters})
		}
		out = append(out, lt)
	}
	return out
}

// settings describes the properties of a parameter schema; directUse is
// true when nothing is required (the evaluator works without settings).
func settings(schema, params json.RawMessage) (map[string]LegacySetting, bool) {
	out := map[string]LegacySetting{}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	var defaults map[string]any
	_ = json.Unmarshal(params, &defaults)
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		st := LegacySetting{Label: label(k, p), Type: typeOf(p), Required: req[k]}
		st.Description, _ = p["description"].(string)
		if v, ok := defaults[k]; ok {
			st.Default = v
		} else if v, ok := p["default"]; ok {
			st.Default = v
		}
		out[k] = st
	}
	return out, len(s.Required) == 0
}

func label(k string, p map[string]any) string {
	if t, ok := p["title"].(string); ok && t != "" {
		return t
	}
	words := strings.Split(k, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// typeOf is the first non-null JSON Schema type of a property.
func typeOf(p map[string]any) string {
	if t, ok := p["type"].(string); ok {
		return t
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := p[key].([]any); ok {
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok {
					if t, ok := am["type"].(string); ok && t != "null" {
						return t
					}
				}
			}
		}
	}
	return "object"
}
