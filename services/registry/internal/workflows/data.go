package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/assayhq/assay/pkg/errs"
)

// Data is a revision's data decoded with numbers kept exact.
type Data map[string]any

// dataKeys are the only keys a workflow revision's data may carry:
// the compatible platform's, and model_cache (false opts the revision's
// model calls in evaluation runs out of the runtime's model-call cache).
var dataKeys = map[string]bool{"uri": true, "url": true, "headers": true, "runtime": true, "script": true, "schemas": true, "parameters": true,
	"model_cache": true}

var schemaKeys = map[string]bool{"parameters": true, "inputs": true, "outputs": true}

// Decode reads a JSON object keeping numbers as json.Number.
func Decode(raw []byte) (Data, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// Encode renders d; nil stays nil.
func (d Data) Encode() json.RawMessage {
	if d == nil {
		return nil
	}
	raw, _ := json.Marshal(map[string]any(d))
	return raw
}

// Validate checks d against the revision data model: known keys only,
// an http(s) url with a host, string or reference headers, a known
// runtime, objects for parameters, and schemas that compile as JSON
// Schema (draft from $schema, default 2020-12). Errors are 422s whose loc
// starts with loc and names the offending key.
func Validate(d Data, loc ...any) error {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	for k, v := range d {
		if !dataKeys[k] {
			return errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	for _, k := range []string{"uri", "url", "runtime", "script"} {
		if v, ok := d[k]; ok && v != nil {
			if _, isStr := v.(string); !isStr {
				return errs.Field("Input should be a valid string", v, at(k)...)
			}
		}
	}
	if v, ok := d["model_cache"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return errs.Field("Input should be a valid boolean", v, at("model_cache")...)
		}
	}
	if s, ok := d["url"].(string); ok {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errs.Field("URL must be http(s) with a host", s, at("url")...)
		}
	}
	if s, ok := d["runtime"].(string); ok && s != "python" && s != "typescript" && s != "javascript" {
		return errs.Field("Input should be 'python', 'typescript' or 'javascript'", s, at("runtime")...)
	}
	if v, ok := d["headers"]; ok && v != nil {
		h, isObj := v.(map[string]any)
		if !isObj {
			return errs.Field("Input should be a valid dictionary", v, at("headers")...)
		}
		for k, hv := range h {
			switch x := hv.(type) {
			case string:
			case map[string]any:
				for rk := range x {
					if rk != "id" && rk != "slug" && rk != "version" {
						return errs.Field("A header reference has only id, slug and version", hv, at("headers", k, rk)...)
					}
				}
			default:
				return errs.Field("A header is a string or a reference", hv, at("headers", k)...)
			}
		}
	}
	if v, ok := d["parameters"]; ok && v != nil {
		if _, isObj := v.(map[string]any); !isObj {
			return errs.Field("Input should be a valid dictionary", v, at("parameters")...)
		}
	}
	if v, ok := d["schemas"]; ok && v != nil {
		s, isObj := v.(map[string]any)
		if !isObj {
			return errs.Field("Input should be a valid dictionary", v, at("schemas")...)
		}
		for k, sv := range s {
			if !schemaKeys[k] {
				return errs.Field("Extra inputs are not permitted", sv, at("schemas", k)...)
			}
			if sv == nil {
				continue
			}
			if err := CheckSchema(sv); err != nil {
				return errs.Field("Invalid JSON Schema: "+err.Error(), sv, at("schemas", k)...)
			}
		}
	}
	return nil
}

// CheckSchema compiles doc as a JSON Schema, offline: a remote $ref is an
// error rather than a fetch.
func CheckSchema(doc any) error {
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return fmt.Errorf("a schema is an object or a boolean")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	// Round-trip through the library's own decoder so json.Number values
	// are the types it expects.
	raw, _ := json.Marshal(doc)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := c.AddResource("schema.json", v); err != nil {
		return err
	}
	_, err = c.Compile("schema.json")
	if err != nil {
		// The library's message starts with the resource URL; keep the cause.
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 && strings.Contains(msg[:i], "schema.json") {
			msg = msg[i+2:]
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("remote schema %s is not loaded", u)
}

// inferredFlags are the revision flags inferred from data at commit; they
// are the only flags a workflow revision stores.
var inferredFlags = []string{"is_managed", "is_custom", "is_llm", "is_hook", "is_code", "is_match", "is_feedback",
	"is_agent", "is_skill", "is_chat", "has_url", "has_script", "has_handler", "is_static"}

// InferFlags applies the compatible platform's rules to data: each flag of
// inferredFlags follows from the URI (its kind and key), the URL, the script
// and, for is_chat, the inputs schema.
func InferFlags(d Data, provider string) map[string]bool {
	f := make(map[string]bool, len(inferredFlags))
	for _, k := range inferredFlags {
		f[k] = false
	}
	s, _ := d["uri"].(string)
	u, ok := ParseURI(s, provider)
	if ok {
		f["is_managed"] = u.Managed(provider)
		f["is_custom"] = u.Kind == "custom"
		for _, k := range []string{"llm", "hook", "code", "match", "feedback", "agent", "skill"} {
			f["is_"+k] = u.Key == k
		}
		f["is_chat"] = u.Key == "chat"
	}
	if !f["is_chat"] {
		if sch, _ := d["schemas"].(map[string]any); sch != nil {
			if in, _ := sch["inputs"].(map[string]any); in != nil {
				props, _ := in["properties"].(map[string]any)
				for _, p := range props {
					pm, _ := p.(map[string]any)
					if t, _ := pm["x-ag-type-ref"].(string); t == "messages" || t == "message" {
						f["is_chat"] = true
					}
				}
			}
		}
	}
	_, hasURL := d["url"].(string)
	f["has_url"] = hasURL || ok && f["is_managed"] && u.Key != "skill"
	_, f["has_script"] = d["script"].(string)
	return f
}

// clean drops nulls, blank strings and the objects they empty, for the
// no-change comparison: such keys carry no meaning.
func clean(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, strings.TrimSpace(x) != ""
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if c, keep := clean(e); keep {
				out[k] = c
			}
		}
		return out, len(out) > 0
	}
	return v, true
}

// SameData reports whether two data payloads are equal once cleaned.
func SameData(a, b json.RawMessage) bool {
	da, db := decodeAny(a), decodeAny(b)
	ca, _ := clean(da)
	cb, _ := clean(db)
	ra, _ := json.Marshal(ca)
	rb, _ := json.Marshal(cb)
	return bytes.Equal(ra, rb)
}

// SameFlags reports whether two flag objects are equal.
func SameFlags(a, b json.RawMessage) bool {
	ra, _ := json.Marshal(decodeAny(a))
	rb, _ := json.Marshal(decodeAny(b))
	return bytes.Equal(ra, rb)
}

func decodeAny(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	_ = d.Decode(&v)
	return v
}
