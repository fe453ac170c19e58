package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Config names our handler provider and where managed handlers are served.
type Config struct {
	Provider    string // "svc"
	ServicesURL string // {base_url}/services
}

// Service implements the workflow-family use cases.
type Service struct {
	reg    *versioned.Service
	envs   *environments.Service
	cat    *catalog.Catalog
	cfg    Config
	params *paramSchemas // shared by the copies With makes
}

// NewService returns a service.
func NewService(reg *versioned.Service, envs *environments.Service, cat *catalog.Catalog, cfg Config) *Service {
	cfg.ServicesURL = strings.TrimRight(cfg.ServicesURL, "/")
	return &Service{reg: reg, envs: envs, cat: cat, cfg: cfg, params: &paramSchemas{}}
}

// Catalog returns the catalog the service enriches from.
func (s *Service) Catalog() *catalog.Catalog { return s.cat }

// Provider returns our handler provider name.
func (s *Service) Provider() string { return s.cfg.Provider }

// ReservedPrefix starts the slugs of static workflows, which clients may
// not create.
const ReservedPrefix = "__ag__"

// CheckSlug refuses a reserved slug.
func CheckSlug(slug string) error {
	if strings.HasPrefix(slug, ReservedPrefix) {
		return versioned.Invalid("The slug prefix '__ag__' is reserved for static workflows.")
	}
	return nil
}

// Roles are the artifact flag keys; they live on the artifact only.
var Roles = []string{"is_application", "is_evaluator", "is_snippet"}

// ArtifactFlags narrows client flags to the artifact model: when any flag
// is sent all three role keys are stored, and force (is_application for
// /applications, is_evaluator for /evaluators) is always true.
func ArtifactFlags(raw json.RawMessage, force string) json.RawMessage {
	if raw == nil {
		return nil
	}
	var in map[string]any
	_ = json.Unmarshal(raw, &in)
	out := map[string]bool{}
	for _, k := range Roles {
		b, _ := in[k].(bool)
		out[k] = b
	}
	if force != "" {
		out[force] = true
	}
	enc, _ := json.Marshal(out)
	return enc
}

// RevisionFlags are the flags a workflow revision shows: its inferred
// flags, the artifact's role flags, and is_static from the artifact slug.
func RevisionFlags(r *versioned.Revision) json.RawMessage {
	out := map[string]any{}
	_ = json.Unmarshal(r.Flags, &out)
	var af map[string]any
	_ = json.Unmarshal(r.ArtifactFlags, &af)
	for _, k := range Roles {
		b, _ := af[k].(bool)
		out[k] = b
	}
	out["is_static"] = strings.HasPrefix(r.ArtifactSlug, ReservedPrefix)
	enc, _ := json.Marshal(out)
	return enc
}

// outputsFromParams are the templates whose outputs schema follows from
// their parameters.
func outputsSchema(key string, params map[string]any) (any, bool) {
	obj := func(props map[string]any, required []any) map[string]any {
		return map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
			"properties": props, "required": required, "additionalProperties": false}
	}
	switch key {
	case "auto_ai_critique":
		js, _ := params["json_schema"].(map[string]any)
		if sch, ok := js["schema"]; ok {
			return sch, true
		}
		return nil, false
	case "json_multi_field_match":
		props := map[string]any{"aggregate_score": map[string]any{"type": "number"}}
		fields, _ := params["fields"].([]any)
		for _, f := range fields {
			if fs, ok := f.(string); ok {
				props[fs] = map[string]any{"type": "number"}
			}
		}
		return obj(props, []any{"aggregate_score"}), true
	case "auto_custom_code_run":
		if v, _ := params["version"].(string); v == "3" {
			return nil, false
		}
		fallthrough
	case "auto_levenshtein_distance", "auto_semantic_similarity", "auto_similarity_match", "auto_json_diff", "auto_webhook_test":
		return obj(map[string]any{"score": map[string]any{"type": "number"}, "success": map[string]any{"type": "boolean"}}, []any{}), true
	}
	return obj(map[string]any{"success": map[string]any{"type": "boolean"}}, []any{"success"}), true
}

// Enrich completes data at commit: the URI's provider alias becomes ours,
// a managed handler gets its url, missing parameter and output schemas come
// from the catalog, outputs follow parameters where the template says so,
// and a skill keeps only its uri and parameters.
func (s *Service) Enrich(d Data) Data {
	if d == nil {
		return nil
	}
	uri, _ := d["uri"].(string)
	if uri == "" {
		return d
	}
	uri = Normalize(uri, s.cfg.Provider)
	d["uri"] = uri
	u, ok := ParseURI(uri, s.cfg.Provider)
	if !ok || !u.Managed(s.cfg.Provider) {
		return d
	}
	if u.Key == "skill" {
		out := Data{"uri": uri}
		if p, ok := d["parameters"]; ok {
			out["parameters"] = p
		}
		if sch, _ := d["schemas"].(map[string]any); sch != nil && sch["parameters"] != nil {
			out["schemas"] = map[string]any{"parameters": sch["parameters"]}
		}
		return out
	}
	if _, has := d["url"]; !has {
		d["url"] = s.cfg.ServicesURL + "/" + u.Key + "/" + u.Version
	}
	t := s.cat.ByKey(u.Key)
	if t == nil {
		return d
	}
	td := t.Decoded()
	sch, _ := d["schemas"].(map[string]any)
	if sch == nil {
		sch = map[string]any{}
	}
	for _, k := range []string{"parameters", "outputs"} {
		if _, has := sch[k]; !has && td.Schemas[k] != nil {
			v, _ := Decode(td.Schemas[k])
			sch[k] = map[string]any(v)
		}
	}
	params, _ := d["parameters"].(map[string]any)
	switch u.Key {
	case "auto_ai_critique", "json_multi_field_match":
		if out, ok := outputsSchema(u.Key, params); ok {
			sch["outputs"] = out
		}
	}
	if len(sch) > 0 {
		d["schemas"] = sch
	}
	return d
}

// Hydrate prepares a simple evaluator's data: a managed builtin URI is
// pinned to v0, its outputs schema follows the compatible platform's table, its
// parameter schema comes from the catalog (client schema keys are kept but
// ours win), and the url is left for the commit to fill.
func (s *Service) Hydrate(d Data) Data {
	uri, _ := d["uri"].(string)
	if uri == "" {
		return d
	}
	u, ok := ParseURI(Normalize(uri, s.cfg.Provider), s.cfg.Provider)
	if !ok || !u.Managed(s.cfg.Provider) || u.Kind != "builtin" {
		return d
	}
	u.Provider, u.Version = s.cfg.Provider, "v0"
	d["uri"] = u.String()
	delete(d, "url")
	sch, _ := d["schemas"].(map[string]any)
	if sch == nil {
		sch = map[string]any{}
	}
	params, _ := d["parameters"].(map[string]any)
	if out, ok := outputsSchema(u.Key, params); ok {
		sch["outputs"] = out
	}
	if t := s.cat.ByKey(u.Key); t != nil {
		if p := t.Decoded().Schemas["parameters"]; p != nil {
			v, _ := Decode(p)
			sch["parameters"] = map[string]any(v)
		}
	}
	d["schemas"] = sch
	return d
}

// CommitInput is one workflow-family commit.
type CommitInput struct {
	Key            string // wire name for messages: workflow, application, evaluator
	VariantID      uuid.UUID
	Slug           string
	Header         versioned.Header
	Message        *string
	Data           Data // nil: no data sent
	Delta          *Delta
	BaseRevisionID *uuid.UUID
	// Strict is the /workflows commit: data is required once the head has
	// data, and an unchanged commit writes nothing (no_change).
	Strict  bool
	Initial bool
	// Loc is where the revision object sits in the request, for the
	// locations of errors in a delta's result (under Loc + "delta").
	// Default: body.<key>_revision. Data is checked by the caller, with
	// Validate and CheckParameters, before it gets here.
	Loc []any
}

// ErrNoChange carries the head an unchanged commit left in place.
type ErrNoChange struct{ Head *versioned.Revision }

func (e *ErrNoChange) Error() string { return "no change" }

// Conflict is the 409 of a commit whose base is no longer the head.
func Conflict(key string, base uuid.UUID, head *versioned.Revision) error {
	details := map[string]any{"base_revision_id": base.String()}
	if head != nil {
		details["current_revision_id"] = head.ID.String()
		details["current_revision_version"] = strconv.Itoa(head.Version)
	}
	return errs.Message(errs.Conflict, "workflows.revision_conflict", fmt.Sprintf("The %s head changed. No revision was committed.", key),
		map[string]any{"code": "revision_conflict", "retryable": false,
			"next_step": "Fetch the current head, reapply your change to it and commit again with its id as base_revision_id.",
			"details":   details})
}

// Commit stores the next revision; noChange reports a Strict commit that
// left the head in place (the head is returned).
func (s *Service) Commit(ctx context.Context, sc scope.Scope, in CommitInput) (rev *versioned.Revision, noChange bool, err error) {
	if in.Slug != "" {
		if err := CheckSlug(in.Slug); err != nil {
			return nil, false, err
		}
	}
	if in.Data != nil && in.Delta != nil {
		return nil, false, versioned.Invalid("Provide either data or delta for a commit, not both.")
	}
	if in.Delta != nil && in.Delta.Ordered() && in.BaseRevisionID == nil {
		return nil, false, versioned.Invalid(in.Key + "_revision.base_revision_id is required with delta operations.")
	}
	at := func(k string) []any {
		loc := in.Loc
		if loc == nil {
			loc = []any{"body", in.Key + "_revision"}
		}
		return append(append([]any{}, loc...), k)
	}
	cm := versioned.Commit{Initial: in.Initial, Revision: versioned.Revision{VariantID: in.VariantID, Slug: in.Slug, Header: in.Header, Message: in.Message}}
	cm.Prepare = func(r *versioned.Revision, head *versioned.Revision, _ int) error {
		if in.BaseRevisionID != nil && (head == nil || head.ID != *in.BaseRevisionID) {
			return Conflict(in.Key, *in.BaseRevisionID, head)
		}
		data := in.Data
		switch {
		case in.Delta != nil:
			var base Data
			if head != nil && head.Data != nil {
				base, _ = Decode(head.Data)
			}
			next, err := in.Delta.Apply(base)
			if err != nil {
				return err
			}
			if err := Validate(next, at("delta")...); err != nil {
				return err
			}
			if err := s.CheckParameters(next, at("delta")...); err != nil {
				return err
			}
			data = next
		case data == nil && in.Strict && head != nil && head.Data != nil:
			return versioned.Invalid(in.Key + "_revision.data is required when committing a " + in.Key + " revision.")
		}
		data = s.Enrich(data)
		flags, _ := json.Marshal(InferFlags(data, s.cfg.Provider))
		r.Data, r.Flags = data.Encode(), flags
		if in.Strict && head != nil && SameData(head.Data, r.Data) && SameFlags(head.Flags, r.Flags) {
			return &ErrNoChange{Head: head}
		}
		return nil
	}
	rev, err = s.reg.Commit(ctx, sc, versioned.Workflows, cm)
	if nc := (*ErrNoChange)(nil); errors.As(err, &nc) {
		return nc.Head, true, nil
	}
	return rev, false, err
}

// Group returns the reference group a role deploys under key.
func Group(role string, r *versioned.Revision) environments.Group {
	v := strconv.Itoa(r.Version)
	return environments.Group{
		role:               {ID: &r.ArtifactID},
		role + "_variant":  {ID: &r.VariantID},
		role + "_revision": {ID: &r.ID, Slug: &r.Slug, Version: &v},
	}
}

// Deploy writes the revision named by refs into the environment named by
// envRefs under key (default "<artifact slug>.revision") as a new
// environment revision; it returns the deployed revision.
func (s *Service) Deploy(ctx context.Context, sc scope.Scope, role string, refs, envRefs versioned.Refs, key, message *string) (*versioned.Revision, error) {
	title := strings.ToUpper(role[:1]) + role[1:]
	if refs.Empty() {
		return nil, versioned.Invalid(title + " deploy requires " + role + " refs.")
	}
	if envRefs.Empty() {
		return nil, versioned.Invalid(title + " deploy requires environment refs.")
	}
	rev, err := s.reg.Resolve(ctx, sc, versioned.Workflows, role, refs)
	if err != nil {
		return nil, err
	}
	if rev == nil {
		return nil, versioned.NotFound(title + " revision not found.")
	}
	env, err := s.reg.Resolve(ctx, sc, versioned.Environments, "environment", envRefs)
	if err != nil {
		return nil, err
	}
	if env == nil {
		return nil, versioned.NotFound("Environment revision not found.")
	}
	k := rev.ArtifactSlug + ".revision"
	if key != nil && *key != "" {
		k = *key
	}
	_, err = s.envs.Commit(ctx, sc, environments.Commit{ArtifactID: env.ArtifactID, VariantID: env.VariantID, Message: message,
		Delta: &environments.Delta{Set: environments.References{k: Group(role, rev)}}})
	if err != nil {
		return nil, err
	}
	return rev, nil
}

// Deployment is what an environment-backed retrieve found.
type Deployment struct {
	Revision    *versioned.Revision
	Environment *versioned.Revision
	Key         string
}

// RetrieveByEnvironment applies the compatible platform's rules: the revision
// an environment deploys under key (derived from the artifact slug when
// omitted), consistent with any entity refs also given.
func (s *Service) RetrieveByEnvironment(ctx context.Context, sc scope.Scope, role string, refs, envRefs versioned.Refs, key *string) (*Deployment, error) {
	if envRefs.Empty() {
		if key != nil {
			return nil, versioned.Invalid(fmt.Sprintf("Retrieving a(n) %s revision by key requires environment refs.", role))
		}
		return nil, nil
	}
	k := ""
	if key != nil && *key != "" {
		k = *key
	} else {
		switch a := refs.Artifact; {
		case a != nil && a.Slug != nil:
			k = *a.Slug + ".revision"
		case a != nil && a.ID != nil:
			art, err := s.reg.Artifact(ctx, sc, versioned.Workflows, *a.ID)
			if err != nil {
				return nil, err
			}
			if art == nil {
				return nil, versioned.Invalid(fmt.Sprintf("The %s named by %s_ref.id does not exist, so no key can be derived.", role, role))
			}
			k = art.Slug + ".revision"
		default:
			return nil, versioned.Invalid(fmt.Sprintf("Retrieving a(n) %s revision from an environment requires key.", role))
		}
	}
	env, err := s.reg.Resolve(ctx, sc, versioned.Environments, "environment", envRefs)
	if err != nil {
		return nil, err
	}
	if env == nil {
		return nil, versioned.NotFound("Environment revision not found.")
	}
	group, ok := environments.ReferencesOf(env)[k]
	ref, found := group[role+"_revision"]
	if !found && role == "workflow" {
		// A workflow retrieve reads what an application or evaluator deploy
		// wrote: they are workflows too.
		for _, alt := range []string{"application", "evaluator"} {
			if ref, found = group[alt+"_revision"]; found {
				break
			}
		}
	}
	if !ok || !found || ref.ID == nil {
		return nil, versioned.NotFound(fmt.Sprintf("Environment revision does not contain %s references for the requested key.", role))
	}
	rev, err := s.reg.Revision(ctx, sc, versioned.Workflows, *ref.ID)
	if err != nil {
		return nil, err
	}
	if rev == nil {
		return nil, versioned.NotFound(fmt.Sprintf("The %s revision deployed under the key no longer exists.", role))
	}
	if err := versioned.Consistent(role, refs, rev); err != nil {
		return nil, err
	}
	return &Deployment{Revision: rev, Environment: env, Key: k}, nil
}

// With returns the service over another registry service (one bound to a
// transaction, for multi-write use cases).
func (s *Service) With(reg *versioned.Service) *Service {
	cp := *s
	cp.reg, cp.envs = reg, s.envs.With(reg)
	return &cp
}
