// Package annotate resolves the workflow an annotation or invocation refers
// to, as the compatible platform does: the evaluator or application is looked up in the
// registry, auto-created when missing, its references are rewritten to the
// resolved {id, slug, version} triple, and annotation data is checked
// against the evaluator's outputs schema.
package annotate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
)

// Registry is what resolution needs of the registry; registryclient.Client
// implements it.
type Registry interface {
	RetrieveWorkflow(ctx context.Context, sc scope.Scope, kind string, ref registryclient.Ref) (*registryclient.Workflow, error)
	CreateWorkflow(ctx context.Context, sc scope.Scope, kind, slug string, data any) error
}

// Resolver resolves evaluator and application references.
type Resolver struct {
	Registry Registry
	// Provider is the URI provider of auto-created feedback evaluators
	// ("svc" gives svc:custom:feedback:v0).
	Provider string
}

// Request is one annotation, invocation or simple trace to resolve.
type Request struct {
	Kind       string         // "evaluator" or "application"
	References map[string]any // rewritten in place
	// Outputs are the data's outputs (see SplitData): what an
	// auto-created evaluator's schema is inferred from, and what Validate
	// checks against the evaluator's outputs schema; OutputsLoc is where
	// the request had them.
	Outputs    any
	OutputsLoc []any
	Validate   bool
	// Loc is where the body keeps references and data ("body", "annotation").
	Loc []any
}

// Resolve looks the workflow up (creating it when missing) and rewrites
// References[kind], [kind_variant] and [kind_revision].
func (r *Resolver) Resolve(ctx context.Context, sc scope.Scope, req Request) error {
	if r == nil || r.Registry == nil {
		return errs.New(errs.Unavailable, "tracing.no_registry", "no registry is configured to resolve "+req.Kind+"s")
	}
	ref, err := refOf(req.References[req.Kind], append(append([]any{}, req.Loc...), "references", req.Kind))
	if err != nil {
		return err
	}
	w, err := r.Registry.RetrieveWorkflow(ctx, sc, req.Kind, ref)
	if err != nil {
		return err
	}
	if w == nil {
		if ref.Slug == "" {
			// Nothing to name a new workflow by: an id that matches nothing is
			// the client's mistake, not a reason to invent a slug.
			return errs.Field(fmt.Sprintf("no %s with id %s, and no slug to create one with", req.Kind, ref.ID), ref.ID,
				append(append([]any{}, req.Loc...), "references", req.Kind)...)
		}
		if err := r.Registry.CreateWorkflow(ctx, sc, req.Kind, ref.Slug, r.newData(req)); err != nil {
			return err
		}
		if w, err = r.Registry.RetrieveWorkflow(ctx, sc, req.Kind, registryclient.Ref{Slug: ref.Slug}); err != nil {
			return err
		}
		if w == nil {
			return errs.New(errs.Unavailable, "tracing.registry_create", "the registry did not return the "+req.Kind+" it created")
		}
	}
	for _, k := range []string{req.Kind, req.Kind + "_variant", req.Kind + "_revision"} {
		if v, ok := w.References[k]; ok {
			m := map[string]any{"id": v.ID}
			if v.Slug != "" {
				m["slug"] = v.Slug
			}
			if v.Version != "" && k == req.Kind+"_revision" {
				m["version"] = v.Version
			}
			req.References[k] = m
		}
	}
	if req.Validate && w.OutputsSchema != nil {
		loc := req.OutputsLoc
		if loc == nil {
			loc = append(append([]any{}, req.Loc...), "data", "outputs")
		}
		return validate(w.OutputsSchema, req.Outputs, loc)
	}
	return nil
}

func (r *Resolver) newData(req Request) any {
	if req.Kind != "evaluator" {
		return nil
	}
	p := r.Provider
	if p == "" {
		p = "svc"
	}
	return map[string]any{"uri": p + ":custom:feedback:v0", "schemas": map[string]any{"outputs": Infer(req.Outputs)}}
}

func refOf(v any, loc []any) (registryclient.Ref, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return registryclient.Ref{}, errs.Field("Input should be a reference {id, slug, version}", v, loc...)
	}
	var ref registryclient.Ref
	if s, ok := m["id"].(string); ok {
		ref.ID = s
	}
	if s, ok := m["slug"].(string); ok {
		ref.Slug = s
	}
	if ref.ID == "" && ref.Slug == "" {
		return ref, errs.Field("A reference needs an id or a slug", v, loc...)
	}
	return ref, nil
}

// Infer builds a JSON Schema that data satisfies, as genson does for the
// compatible platform: objects list their properties and require all of them.
// Numbers are "number" whatever their value: JSON does not tell 5 from 5.0,
// and a later annotation with 4.5 should still fit.
func Infer(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		props := map[string]any{}
		req := make([]any, 0, len(t))
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			props[k] = Infer(t[k])
			req = append(req, k)
		}
		return map[string]any{"type": "object", "properties": props, "required": req}
	case []any:
		s := map[string]any{"type": "array"}
		var items []map[string]any
		seen := map[string]bool{}
		for _, e := range t {
			is := Infer(e)
			b, _ := json.Marshal(is)
			if !seen[string(b)] {
				seen[string(b)] = true
				items = append(items, is)
			}
		}
		switch len(items) {
		case 0:
		case 1:
			s["items"] = items[0]
		default:
			anyOf := make([]any, len(items))
			for i, is := range items {
				anyOf[i] = is
			}
			s["items"] = map[string]any{"anyOf": anyOf}
		}
		return s
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	case nil:
		return map[string]any{"type": "null"}
	default:
		return map[string]any{"type": "number"}
	}
}

var printer = message.NewPrinter(language.English)

// validate checks data against schema; failures are a 422 whose entries
// name the offending path under loc, shaped like the compatible platform's.
func validate(schema json.RawMessage, data any, loc []any) error {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.evaluator_schema", fmt.Errorf("the evaluator's outputs schema: %w", err))
	}
	if err := c.AddResource("outputs.json", doc); err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.evaluator_schema", err)
	}
	sch, err := c.Compile("outputs.json")
	if err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.evaluator_schema", fmt.Errorf("the evaluator's outputs schema does not compile: %w", err))
	}
	raw, _ := json.Marshal(data)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return errs.Wrap(errs.Internal, "tracing.validate", err)
	}
	var out []errs.FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		l := append([]any{}, loc...)
		for _, p := range e.InstanceLocation {
			l = append(l, p)
		}
		out = append(out, errs.FieldError{Type: "value_error.json_schema", Loc: l, Msg: e.ErrorKind.LocalizedString(printer)})
	}
	walk(ve)
	msgs := make([]string, len(out))
	for i, f := range out {
		msgs[i] = fmt.Sprintf("%v: %s", f.Loc, f.Msg)
	}
	return &errs.Error{Kind: errs.Unprocessable, Code: "tracing.data_schema", Msg: strings.Join(msgs, "; "), Detail: out}
}

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("remote schema %s is not loaded", u)
}
