package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/catalog"
)

// paramSchemas holds the compiled parameters schema of each catalog
// template, by key. The catalog is fixed for the life of the process, so
// each schema is compiled once, on first use.
type paramSchemas struct {
	once   sync.Once
	byKey  map[string]*jsonschema.Schema
	kindOf map[string]string // template key → handler kind (builtin, custom)
	err    error
}

func (p *paramSchemas) load(cat *catalog.Catalog, provider string) error {
	p.once.Do(func() {
		p.byKey, p.kindOf = map[string]*jsonschema.Schema{}, map[string]string{}
		for _, t := range cat.Templates(catalog.Role{}, true) {
			d := t.Decoded()
			u, ok := ParseURI(d.URI, provider)
			raw := d.Schemas["parameters"]
			if !ok || len(raw) == 0 || string(raw) == "null" {
				continue
			}
			sch, err := compileSchema(raw, t.Key+".parameters.json")
			if err != nil {
				// The catalog ships with the binary; a test compiles every
				// schema, so this is a build defect, reported on use.
				p.err = fmt.Errorf("catalog template %s: parameters schema: %w", t.Key, err)
				return
			}
			p.byKey[t.Key], p.kindOf[t.Key] = sch, u.Kind
		}
	})
	return p.err
}

// compileSchema compiles one schema document offline.
func compileSchema(raw json.RawMessage, name string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(name, doc); err != nil {
		return nil, err
	}
	return c.Compile(name)
}

// CheckParameters validates d's parameters against the parameters schema
// of the catalog template its URI names (one of our managed handlers, the
// template's kind and key; any version, as Enrich reads the catalog). The
// handler behind that URI is ours and reads its parameters by that schema,
// so it is the authority even when the client sent its own
// schemas.parameters. Data without parameters, or naming another URI, is
// not checked. Failures are one 422 listing every offending field under
// loc (loc + "parameters" + the path to the field).
func (s *Service) CheckParameters(d Data, loc ...any) error {
	params, ok := d["parameters"]
	if !ok || params == nil {
		return nil
	}
	uri, _ := d["uri"].(string)
	u, ok := ParseURI(Normalize(uri, s.cfg.Provider), s.cfg.Provider)
	if uri == "" || !ok || !u.Managed(s.cfg.Provider) {
		return nil
	}
	if err := s.params.load(s.cat, s.cfg.Provider); err != nil {
		return errs.Wrap(errs.Internal, "workflows.catalog", err)
	}
	sch := s.params.byKey[u.Key]
	if sch == nil || s.params.kindOf[u.Key] != u.Kind {
		return nil
	}
	// Round-trip through the library's decoder, so every value has the
	// types it expects (json.Number for numbers).
	raw, _ := json.Marshal(params)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return errs.Wrap(errs.Internal, "workflows.parameters", err)
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return errs.Wrap(errs.Internal, "workflows.parameters", err)
	}
	return parameterErrors(ve, inst, append(append([]any{}, loc...), "parameters"))
}

var printer = message.NewPrinter(language.English)

// parameterErrors flattens a validation failure into one 422 entry per
// offending field, sorted by location so the answer is stable. An extra or
// missing property is named by its own location, in the words of the
// compatible platform's validation errors ("Extra inputs are not permitted", "Field
// required"); other failures name the value's location with the library's
// message ("got number, want string").
func parameterErrors(ve *jsonschema.ValidationError, inst any, loc []any) error {
	var out []errs.FieldError
	seen := map[string]bool{}
	add := func(fe errs.FieldError) {
		key := fmt.Sprint(fe.Loc, fe.Msg)
		if !seen[key] {
			seen[key] = true
			out = append(out, fe)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := append(append([]any{}, loc...), pathOf(inst, e.InstanceLocation)...)
		val := valueAt(inst, e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			obj, _ := val.(map[string]any)
			for _, p := range k.Properties {
				add(errs.FieldError{Type: "extra_forbidden", Loc: append(slices.Clone(at), p), Msg: "Extra inputs are not permitted", Input: obj[p]})
			}
		case *kind.Required:
			for _, p := range k.Missing {
				add(errs.FieldError{Type: "missing", Loc: append(slices.Clone(at), p), Msg: "Field required", Input: val})
			}
		default:
			add(errs.FieldError{Type: "value_error.json_schema", Loc: at, Msg: e.ErrorKind.LocalizedString(printer), Input: val})
		}
	}
	walk(ve)
	slices.SortFunc(out, func(a, b errs.FieldError) int { return strings.Compare(fmt.Sprint(a.Loc), fmt.Sprint(b.Loc)) })
	msgs := make([]string, len(out))
	for i, f := range out {
		msgs[i] = fmt.Sprintf("%v: %s", f.Loc, f.Msg)
	}
	return &errs.Error{Kind: errs.Unprocessable, Code: "workflows.invalid_parameters", Msg: strings.Join(msgs, "; "), Detail: out}
}

// pathOf turns a JSON pointer's tokens into a loc, walking the instance:
// array indexes become numbers, as in the compatible platform's validation errors.
func pathOf(inst any, tokens []string) []any {
	out := make([]any, len(tokens))
	for i, t := range tokens {
		out[i] = t
		switch x := inst.(type) {
		case map[string]any:
			inst = x[t]
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(x) {
				inst = nil
				continue
			}
			out[i], inst = n, x[n]
		default:
			inst = nil
		}
	}
	return out
}

// valueAt is the value at a JSON pointer's tokens, or nil.
func valueAt(v any, tokens []string) any {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(x) {
				return nil
			}
			v = x[n]
		default:
			return nil
		}
	}
	return v
}
