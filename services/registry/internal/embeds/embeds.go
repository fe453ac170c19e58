// Package embeds expands the embed tokens of a revision's data, as
// POST /<e>/revisions/resolve and retrieve with resolve:true do.
//
// The compatible platform's syntax, in two forms.
//
// Object form: a JSON object whose only key is "@ag.embed":
//
//	{"@ag.embed": {
//	    "@ag.references": {"workflow": {"slug": "tone"}, "workflow_revision": {"version": "2"}},
//	    "@ag.selector": {"path": "parameters.prompt"}}}
//
// The whole object is replaced by the selected value, of any JSON type.
//
// String form, inside any string value:
//
//	@ag.embed[@ag.references[workflow.slug=tone, workflow_revision.version=2], @ag.selector[path:parameters.prompt]]
//
// The references are comma-separated <entity>.<id|slug|version>=<value>
// (or a JSON object as in the object form); the selector is path:<path>
// and/or key:<key> ("=" may stand for ":"; a bare dotted path is the
// path), or a JSON object as in the object form. The token is replaced by
// the selected value: a string as is, anything else as compact JSON.
// Brackets balance, in values too (parse.go).
//
// Our earlier string syntax stays an alias:
//
//	@ag.embed[workflow.slug=tone,workflow_revision.version=2;path=parameters.prompt]
//
// i.e. "@ag.embed[" refs [";key=" key] [";path=" path] "]". Its values
// cannot hold ",", ";" or "]".
//
// References: the entity keys are <e>, <e>_variant and <e>_revision with <e>
// one of workflow, application or evaluator (one family: they name the same
// rows), and environment, environment_variant and environment_revision. The
// Lookup a caller passes resolves them (workflows.Service.EmbedLookup: the
// retrieve rules of versioned.Service.Resolve, so a bare artifact ref means the
// latest revision of its default variant; with environment refs and a
// workflow-family ref or a key, the revision deployed there under the key, as
// RetrieveByEnvironment finds it; environment refs alone name the environment
// revision itself, whose own data is embedded, as the compatible platform
// does).
//
// Selector: "path", a dotted path into the target revision's data (integer
// segments index lists; none: the whole data, as the compatible platform
// inserts it), and "key", the environment key of a deployment (default
// "<artifact slug>.revision").
//
// Embedded values are expanded in turn (depth 2, 3, ...; tokens in the
// document itself are depth 1). Errors: a depth above max_depth, more than
// max_embeds expansions, a cycle (a revision embedding itself, directly or
// not), a malformed token, a reference that resolves to nothing, a path
// that selects nothing. error_policy decides what an error does:
// "exception" (default) fails the request with 400 and the error list;
// "placeholder" puts the string "<error:CODE>" in the token's place (the
// compatible platform's "<error:...>" form; the compatible platform gives no exact
// text, so the rest is the error code, e.g. "<error:not_found>"); "keep"
// leaves the token as it was. Every error is listed in
// resolution_info.errors either way.
package embeds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Error policies.
const (
	Exception   = "exception"
	Placeholder = "placeholder"
	Keep        = "keep"
)

// Options bound a resolution.
type Options struct {
	MaxDepth  int
	MaxEmbeds int
	Policy    string
}

// Defaults are the compatible platform's defaults.
func Defaults() Options { return Options{MaxDepth: 10, MaxEmbeds: 100, Policy: Exception} }

// Error is one token that could not be expanded.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Path locates the token: dotted path in the resolved document, and
	// " > " then the path inside each embedded value it came through.
	Path string `json:"path"`
}

// Info is resolution_info.
type Info struct {
	ReferencesUsed []map[string]versioned.Ref `json:"references_used"`
	DepthReached   int                        `json:"depth_reached"`
	EmbedsResolved int                        `json:"embeds_resolved"`
	Errors         []Error                    `json:"errors"`
}

// Target is what one token names: its references, and the environment
// key from its selector (nil if none).
type Target struct {
	Refs map[string]versioned.Ref
	Key  *string
}

// Ref returns the reference to entity, or nil.
func (t Target) Ref(entity string) *versioned.Ref {
	if r, ok := t.Refs[entity]; ok {
		return &r
	}
	return nil
}

// Found is a token's target revision and, when it was read through an
// environment, that environment's revision. Entity is Environment when
// the target is an environment revision itself (its own data is
// embedded), else "" (a workflow-family revision).
type Found struct {
	Revision    *versioned.Revision
	Environment *versioned.Revision
	Entity      string
}

// Lookup finds the revision a token names; nil if none. An error of kind
// NotFound becomes the token's not_found error, Invalid its
// invalid_reference error; any other error fails the request.
type Lookup func(ctx context.Context, t Target) (*Found, error)

// Families are the workflow-family entity prefixes a token may use.
var Families = []string{"workflow", "application", "evaluator"}

// Environment is the entity prefix of environment references.
const Environment = "environment"

// Resolve expands the tokens of data. self, if set, is the revision data
// belongs to (embedding it is a cycle). Under the exception policy the
// first error is returned as a 400 carrying the errors.
func Resolve(ctx context.Context, data json.RawMessage, self *uuid.UUID, lookup Lookup, o Options) (json.RawMessage, *Info, error) {
	info := &Info{ReferencesUsed: []map[string]versioned.Ref{}, Errors: []Error{}}
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return data, info, nil
	}
	v, err := decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decode data: %w", err)
	}
	r := &resolver{ctx: ctx, lookup: lookup, o: o, info: info, used: map[uuid.UUID]bool{}}
	var stack []uuid.UUID
	if self != nil {
		stack = []uuid.UUID{*self}
	}
	out, err := r.walk(v, "", 1, stack)
	if err != nil {
		return nil, info, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("encode data: %w", err)
	}
	return raw, info, nil
}

type resolver struct {
	ctx    context.Context
	lookup Lookup
	o      Options
	info   *Info
	used   map[uuid.UUID]bool
	prefix string // where the embedded value being walked came from
}

// failure is a token error before the policy is applied.
type failure struct{ code, msg string }

func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// walk expands the tokens in v, found at path and nesting depth.
func (r *resolver) walk(v any, path string, depth int, stack []uuid.UUID) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if spec, ok := x["@ag.embed"]; ok && len(x) == 1 {
			return r.embed(x, spec, path, depth, stack)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // errors come in a stable order
		out := make(map[string]any, len(x))
		for _, k := range keys {
			nv, err := r.walk(x[k], join(path, k), depth, stack)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			nv, err := r.walk(it, join(path, strconv.Itoa(i)), depth, stack)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case string:
		return r.text(x, path, depth, stack)
	}
	return v, nil
}

// text expands the string tokens of s.
func (r *resolver) text(s, path string, depth int, stack []uuid.UUID) (any, error) {
	if !strings.Contains(s, "@ag.embed[") {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, sp := range scanTokens(s) {
		b.WriteString(s[last:sp.start])
		last = sp.end
		token := s[sp.start:sp.end]
		target, sel, f := parseText(sp.inner(s))
		var val any
		var err error
		if f == nil {
			val, f, err = r.expand(target, sel, path, depth, stack)
			if err != nil {
				return nil, err
			}
		}
		if f != nil {
			rep, err := r.fail(*f, path, token)
			if err != nil {
				return nil, err
			}
			b.WriteString(rep.(string))
			continue
		}
		if str, ok := val.(string); ok {
			b.WriteString(str)
		} else {
			raw, _ := json.Marshal(val)
			b.Write(raw)
		}
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

func (r *resolver) embed(token map[string]any, spec any, path string, depth int, stack []uuid.UUID) (any, error) {
	target, sel, f := parseObject(spec)
	var val any
	var err error
	if f == nil {
		if val, f, err = r.expand(target, sel, path, depth, stack); err != nil {
			return nil, err
		}
	}
	if f != nil {
		return r.fail(*f, path, token)
	}
	return val, nil
}

// expand finds, selects and recursively resolves one token's target.
func (r *resolver) expand(t Target, sel, path string, depth int, stack []uuid.UUID) (any, *failure, error) {
	for ent := range t.Refs {
		if !knownEntity(ent) {
			return nil, &failure{"invalid_token", fmt.Sprintf("unknown entity %q; use <e>, <e>_variant or <e>_revision with <e> in %v or %s", ent, Families, Environment)}, nil
		}
	}
	if depth > r.o.MaxDepth {
		return nil, &failure{"max_depth", fmt.Sprintf("embed depth %d exceeds max_depth %d", depth, r.o.MaxDepth)}, nil
	}
	if r.info.EmbedsResolved >= r.o.MaxEmbeds {
		return nil, &failure{"max_embeds", fmt.Sprintf("more than max_embeds=%d embeds", r.o.MaxEmbeds)}, nil
	}
	found, err := r.lookup(r.ctx, t)
	if err != nil {
		switch e := errs.From(err); e.Kind {
		case errs.NotFound:
			return nil, &failure{"not_found", e.Msg}, nil
		case errs.Invalid:
			return nil, &failure{"invalid_reference", e.Msg}, nil
		}
		return nil, nil, err
	}
	if found == nil || found.Revision == nil {
		return nil, &failure{"not_found", "the references resolve to no revision"}, nil
	}
	rev := found.Revision
	for _, id := range stack {
		if id == rev.ID {
			return nil, &failure{"cycle", fmt.Sprintf("revision %s embeds itself", rev.ID)}, nil
		}
	}
	var data any
	if rev.Data != nil {
		if data, err = decode(rev.Data); err != nil {
			return nil, nil, fmt.Errorf("decode embedded revision %s: %w", rev.ID, err)
		}
	}
	val, ok := selectPath(data, sel)
	if !ok {
		return nil, &failure{"invalid_selector", fmt.Sprintf("path %q selects nothing in revision %s", sel, rev.ID)}, nil
	}
	r.info.EmbedsResolved++
	r.info.DepthReached = max(r.info.DepthReached, depth)
	if !r.used[rev.ID] {
		r.used[rev.ID] = true
		used := map[string]versioned.Ref{}
		if found.Entity == Environment {
			addRefs(used, Environment, rev)
		} else {
			addRefs(used, "workflow", rev)
		}
		if found.Environment != nil && found.Entity != Environment {
			addRefs(used, Environment, found.Environment)
		}
		r.info.ReferencesUsed = append(r.info.ReferencesUsed, used)
	}
	// Errors inside the embedded value are located through this token.
	inner := &resolver{ctx: r.ctx, lookup: r.lookup, o: r.o, info: r.info, used: r.used, prefix: r.prefix + path + " > "}
	out, err := inner.walk(val, "", depth+1, append(append([]uuid.UUID{}, stack...), rev.ID))
	if err != nil {
		return nil, nil, err
	}
	return out, nil, nil
}

// addRefs adds the <e>, <e>_variant and <e>_revision references of rev.
func addRefs(m map[string]versioned.Ref, e string, rev *versioned.Revision) {
	v := strconv.Itoa(rev.Version)
	m[e] = versioned.Ref{ID: &rev.ArtifactID, Slug: &rev.ArtifactSlug}
	m[e+"_variant"] = versioned.Ref{ID: &rev.VariantID, Slug: &rev.VariantSlug}
	m[e+"_revision"] = versioned.Ref{ID: &rev.ID, Slug: &rev.Slug, Version: &v}
}

func knownEntity(e string) bool {
	for _, f := range append([]string{Environment}, Families...) {
		if e == f || e == f+"_variant" || e == f+"_revision" {
			return true
		}
	}
	return false
}

// fail applies the error policy to a token.
func (r *resolver) fail(f failure, path string, token any) (any, error) {
	e := Error{Code: f.code, Message: f.msg, Path: r.prefix + path}
	r.info.Errors = append(r.info.Errors, e)
	switch r.o.Policy {
	case Placeholder:
		return "<error:" + f.code + ">", nil
	case Keep:
		if s, ok := token.(string); ok {
			return s, nil
		}
		return token, nil
	}
	return nil, errs.Message(errs.Invalid, "embeds.unresolved", "An embed could not be resolved: "+f.msg,
		map[string]any{"code": "embed_unresolved", "errors": r.info.Errors})
}

// selectPath follows a dotted path; integer segments index lists. The
// empty path selects v itself.
func selectPath(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for _, seg := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			nv, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = nv
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
