// Package environments holds the environment use cases: revisions whose
// data is a map of deployment keys to reference groups, commits by full
// data or by a set/remove delta, lookups of what a key deploys, the simple
// surface (its versioned.SimpleFamily, guarding) and the family's
// git-model rules.
package environments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Group is one deployment: entity type ("application", "application_variant",
// "application_revision", ...) to reference.
type Group map[string]versioned.Ref

// References maps a deployment key ("my-app.revision") to its group.
type References map[string]Group

// Data is an environment revision's data.
type Data struct {
	// References is null in an environment nothing was deployed to.
	References References `json:"references" apidoc:"nullable"`
	// loc is where the references were sent (ParseData's loc), for errors.
	loc []any
}

// Delta sets and removes keys of the newest references.
type Delta struct {
	Set    References `json:"set,omitempty"`
	Remove []string   `json:"remove,omitempty"`
	// loc is where the delta was sent (ParseDelta's loc), for errors.
	loc []any
}

// Service implements environment commits over the registry.
type Service struct{ reg *versioned.Service }

// NewService returns a service.
func NewService(reg *versioned.Service) *Service { return &Service{reg: reg} }

// ParseData checks raw against the data model: only "references", a map
// of groups of references. loc prefixes 422 locations.
func ParseData(raw json.RawMessage, loc ...any) (*Data, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errs.Field("Input should be a valid dictionary", json.RawMessage(raw), loc...)
	}
	for k, v := range m {
		if k != "references" {
			return nil, errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	d := &Data{loc: at("references")}
	if v, ok := m["references"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		refs, err := parseRefs(v, at("references")...)
		if err != nil {
			return nil, err
		}
		d.References = refs
	}
	return d, nil
}

func parseRefs(raw json.RawMessage, loc ...any) (References, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var groups map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, errs.Field("Input should be a map of keys to reference groups", json.RawMessage(raw), loc...)
	}
	out := References{}
	for key, g := range groups {
		grp := Group{}
		for typ, rv := range g {
			var ref versioned.Ref
			if err := json.Unmarshal(rv, &ref); err != nil {
				return nil, errs.Field("Input should be a valid reference", rv, at(key, typ)...)
			}
			grp[typ] = ref
		}
		out[key] = grp
	}
	return out, nil
}

// ParseDelta reads {"set": {...}, "remove": [...]}.
func ParseDelta(raw json.RawMessage, loc ...any) (*Delta, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errs.Field("Input should be a valid dictionary", json.RawMessage(raw), loc...)
	}
	d := &Delta{loc: at("set")}
	for k, v := range m {
		switch k {
		case "set":
			refs, err := parseRefs(v, at("set")...)
			if err != nil {
				return nil, err
			}
			d.Set = refs
		case "remove":
			if err := json.Unmarshal(v, &d.Remove); err != nil {
				return nil, errs.Field("Input should be a list of keys", v, at("remove")...)
			}
		default:
			return nil, errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	return d, nil
}

// Encode renders the data; nil references are null.
func (d *Data) Encode() json.RawMessage {
	if d == nil {
		return nil
	}
	if d.References == nil {
		return json.RawMessage(`{"references":null}`)
	}
	raw, _ := json.Marshal(d)
	return raw
}

// Commit is one environment commit: Data replaces, Delta patches the
// newest references of the variant. Neither: the revision has no data.
type Commit struct {
	ArtifactID uuid.UUID
	VariantID  uuid.UUID
	Slug       string
	Header     versioned.Header
	Message    *string
	Data       *Data
	Delta      *Delta
	Initial    bool
}

// Commit stores the next revision. A delta is applied under the variant
// lock to the newest revision that has references, so concurrent deploys
// never lose each other's keys.
func (s *Service) Commit(ctx context.Context, sc scope.Scope, c Commit) (*versioned.Revision, error) {
	rev := versioned.Revision{ArtifactID: c.ArtifactID, VariantID: c.VariantID, Slug: c.Slug, Header: c.Header, Message: c.Message}
	// Environment revisions have no typed flags.
	rev.Flags = nil
	// Groups carried over by a delta were rewritten (and checked) when
	// they were set, so only the incoming groups need it (outside the
	// variant lock).
	if c.Data != nil {
		if err := s.ownRevisions(ctx, sc, c.Data.References, c.Data.loc); err != nil {
			return nil, err
		}
		if err := s.rewriteSlugs(ctx, sc, c.Data.References); err != nil {
			return nil, err
		}
	}
	if c.Delta != nil {
		if err := s.ownRevisions(ctx, sc, c.Delta.Set, c.Delta.loc); err != nil {
			return nil, err
		}
		if err := s.rewriteSlugs(ctx, sc, c.Delta.Set); err != nil {
			return nil, err
		}
	}
	if c.Data != nil {
		rev.Data = c.Data.Encode()
	}
	cm := versioned.Commit{Revision: rev, Initial: c.Initial}
	if c.Delta == nil {
		return s.reg.Commit(ctx, sc, versioned.Environments, cm)
	}
	// Prepare runs under the variant lock, inside the commit's transaction;
	// when the head has no references it reads older revisions, and must
	// read them on that transaction: through a service on the pool it took
	// a second connection while holding the lock, so as many concurrent
	// deploys as the pool has connections held them all and stalled (until
	// their lock timeout, or for good without one).
	var out *versioned.Revision
	err := s.reg.InTx(ctx, func(tx *versioned.Service) error {
		envs := s.With(tx)
		cm.Prepare = func(r *versioned.Revision, head *versioned.Revision, _ int) error {
			base, err := envs.newestReferences(ctx, sc, head, c.VariantID)
			if err != nil {
				return err
			}
			for _, k := range c.Delta.Remove {
				delete(base, k)
			}
			for k, g := range c.Delta.Set {
				base[k] = g
			}
			if len(base) == 0 { // an emptied map is stored as null, as the compatible platform does
				base = nil
			}
			r.Data = (&Data{References: base}).Encode()
			return nil
		}
		var err error
		out, err = tx.Commit(ctx, sc, versioned.Environments, cm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// revisionFamilies maps the "<entity>_revision" keys of a group to the
// family their revision ids name.
var revisionFamilies = map[string]versioned.Family{
	"workflow_revision": versioned.Workflows, "application_revision": versioned.Workflows,
	"evaluator_revision": versioned.Workflows, "testset_revision": versioned.Testsets,
	"query_revision": versioned.Queries, "environment_revision": versioned.Environments,
}

// ownRevisions refuses a group naming, by id, a revision that is not one
// of the caller's project: an environment deploys what it references, so
// another project's revision id must not be stored in it. A revision of
// another project and one that does not exist get the same 422 naming
// the field, so the answer tells nothing about other projects.
func (s *Service) ownRevisions(ctx context.Context, sc scope.Scope, refs References, loc []any) error {
	for key, g := range refs {
		for typ, r := range g {
			f, ok := revisionFamilies[typ]
			if !ok || r.ID == nil {
				continue
			}
			rev, err := s.reg.Revision(ctx, sc, f, *r.ID)
			if err != nil {
				return fmt.Errorf("check %s %s: %w", typ, r.ID, err)
			}
			if rev == nil {
				return errs.Field("Input should be the id of a "+strings.ReplaceAll(typ, "_", " ")+" of this project",
					r.ID.String(), append(append([]any{}, loc...), key, typ, "id")...)
			}
		}
	}
	return nil
}

// Roles are the entity prefixes of workflow-family reference groups.
var Roles = []string{"workflow", "application", "evaluator"}

// rewriteSlugs replaces, in every group, the artifact, variant and revision
// slugs a client sent with those of the real workflow lineage (as the
// compatible platform's commit does): a group naming a revision by id with a
// stale or wrong slug is stored with the true ones. Slugs that were not sent
// stay absent; a group whose lineage cannot be resolved is kept as sent.
func (s *Service) rewriteSlugs(ctx context.Context, sc scope.Scope, refs References) error {
	for _, g := range refs {
		for _, e := range Roles {
			keys := []string{e, e + "_variant", e + "_revision"}
			sent := false
			for _, k := range keys {
				if r, ok := g[k]; ok && r.Slug != nil {
					sent = true
				}
			}
			if !sent {
				continue
			}
			rev, err := s.lineage(ctx, sc, e, g)
			if err != nil {
				return err
			}
			if rev == nil {
				continue
			}
			real := []string{rev.ArtifactSlug, rev.VariantSlug, rev.Slug}
			for i, k := range keys {
				if r, ok := g[k]; ok && r.Slug != nil {
					slug := real[i]
					r.Slug = &slug
					g[k] = r
				}
			}
		}
	}
	return nil
}

// lineage finds the revision a group names under prefix e. Ids are
// trusted over slugs (the slugs are what is being corrected); references
// that resolve to nothing or disagree give nil.
func (s *Service) lineage(ctx context.Context, sc scope.Scope, e string, g Group) (*versioned.Revision, error) {
	pick := func(k string, withVersion bool) *versioned.Ref {
		r, ok := g[k]
		if !ok {
			return nil
		}
		out := versioned.Ref{ID: r.ID}
		if r.ID == nil {
			out.Slug = r.Slug
		}
		if withVersion {
			out.Version = r.Version
		}
		return &out
	}
	refs := versioned.Refs{Artifact: pick(e, false), Variant: pick(e+"_variant", false), Revision: pick(e+"_revision", true)}
	if rr := refs.Revision; rr != nil && rr.ID != nil {
		rr.Version = nil // the id names the revision; a stale version must not block the rewrite
	}
	rev, err := s.reg.Resolve(ctx, sc, versioned.Workflows, e, refs)
	if err != nil {
		if k := errs.KindOf(err); k == errs.Invalid || k == errs.NotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("resolve %s lineage: %w", e, err)
	}
	return rev, nil
}

// newestReferences returns a copy of the references of the newest
// non-archived revision that has any: the head in the common case.
func (s *Service) newestReferences(ctx context.Context, sc scope.Scope, head *versioned.Revision, variantID uuid.UUID) (References, error) {
	if refs := referencesOf(head); len(refs) > 0 {
		return refs, nil
	}
	order, limit := "descending", 100
	var next *uuid.UUID
	for {
		rs, err := s.reg.QueryRevisions(ctx, sc, versioned.Environments, versioned.Query{
			VariantRefs: []versioned.Ref{{ID: &variantID}}, Windowing: &versioned.Windowing{Order: &order, Limit: &limit, Next: next}})
		if err != nil {
			return nil, err
		}
		for i := range rs {
			if refs := referencesOf(&rs[i]); len(refs) > 0 {
				return refs, nil
			}
		}
		if len(rs) < limit {
			return References{}, nil
		}
		next = &rs[len(rs)-1].ID
	}
}

// ReferencesOf decodes a revision's references; empty when it has none.
func ReferencesOf(r *versioned.Revision) References { return referencesOf(r) }

func referencesOf(r *versioned.Revision) References {
	out := References{}
	if r == nil || r.Data == nil {
		return out
	}
	var d Data
	if json.Unmarshal(r.Data, &d) != nil {
		return out
	}
	for k, g := range d.References {
		out[k] = g
	}
	return out
}

// With returns the service over another registry service (one bound to a
// transaction).
func (s *Service) With(reg *versioned.Service) *Service { return &Service{reg: reg} }

// DeploymentChanged keeps the revisions of rs where the deployment of any
// artifact named by artifacts changed against the previous revision of the
// same variant (the compatible platform's `references` filter on the environment
// revision query, a UI helper for "deploy history of this app"). An
// artifact matches a group's <e> reference by id or slug, <e> being any
// workflow role; a group's deployment is its revision reference.
func (s *Service) DeploymentChanged(ctx context.Context, sc scope.Scope, rs []versioned.Revision, artifacts []versioned.Ref) ([]versioned.Revision, error) {
	// Deploys store ids only, so a slug-only artifact ref is matched
	// through the artifact it names.
	artifacts = append([]versioned.Ref{}, artifacts...)
	for i, a := range artifacts {
		if a.ID == nil && a.Slug != nil {
			art, err := s.reg.ResolveArtifact(ctx, sc, versioned.Workflows, &a)
			if err != nil {
				return nil, fmt.Errorf("resolve artifact %q: %w", *a.Slug, err)
			}
			if art != nil {
				artifacts[i].ID = &art.ID
			}
		}
	}
	prev := map[uuid.UUID]*versioned.Revision{} // revision id -> previous revision in its variant
	seen := map[uuid.UUID]bool{}
	for _, r := range rs {
		if seen[r.VariantID] {
			continue
		}
		seen[r.VariantID] = true
		id := r.VariantID
		lineage, err := s.reg.QueryRevisions(ctx, sc, versioned.Environments, versioned.Query{VariantRefs: []versioned.Ref{{ID: &id}}, IncludeArchived: true})
		if err != nil {
			return nil, fmt.Errorf("environment lineage: %w", err)
		}
		sort.Slice(lineage, func(i, j int) bool { return lineage[i].Version < lineage[j].Version })
		for i := 1; i < len(lineage); i++ {
			prev[lineage[i].ID] = &lineage[i-1]
		}
	}
	out := []versioned.Revision{}
	for _, r := range rs {
		if deployment(&r, artifacts) != deployment(prev[r.ID], artifacts) {
			out = append(out, r)
		}
	}
	return out, nil
}

// deployment renders what r deploys for the artifacts: each matching key
// with its revision reference, in key order.
func deployment(r *versioned.Revision, artifacts []versioned.Ref) string {
	refs := referencesOf(r)
	keys := make([]string, 0, len(refs))
	for k := range refs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		g := refs[k]
		for _, e := range Roles {
			a, ok := g[e]
			if !ok || !matchesAny(a, artifacts) {
				continue
			}
			rev, _ := json.Marshal(g[e+"_revision"])
			fmt.Fprintf(&b, "%q=%s;", k, rev)
			break
		}
	}
	return b.String()
}

func matchesAny(a versioned.Ref, refs []versioned.Ref) bool {
	for _, r := range refs {
		if r.ID != nil && a.ID != nil && *r.ID == *a.ID || r.Slug != nil && a.Slug != nil && *r.Slug == *a.Slug {
			return true
		}
	}
	return false
}
