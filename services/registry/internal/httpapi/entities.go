package httpapi

import (
	"encoding/json"
	"strconv"

	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// kind describes one family's wire names: the entity key ("testset") and
// its plural, and which alias ids its revisions carry.
type kind struct {
	fam    versioned.Family
	key    string // testset, workflow, application, evaluator, environment, query
	plural string
	// generic: revisions and variants also carry artifact_id/variant_id
	// (every family but testsets).
	generic bool
	// alias is a second entity prefix the ids are also sent under
	// ("workflow" for applications and evaluators).
	alias string
	// revFlags and varFlags, when set, compute the flags a revision or a
	// variant shows (workflow revisions merge the artifact's role flags;
	// workflow variants show the artifact's flags as their own).
	revFlags func(r *versioned.Revision) json.RawMessage
	varFlags func(v *versioned.Variant) json.RawMessage
	// noWindowing: list responses never carry windowing.
	noWindowing bool
	// variantWindowing: variant lists carry windowing too (only the
	// workflow family's, evaluators excepted; testset variant lists never do).
	variantWindowing bool
	// urlQuery names the query levels ("artifact", "variant", "revision")
	// that also take URL query parameters (reference §1.4).
	urlQuery map[string]bool
	// forkByQuery: fork also takes the source variant as
	// ?<e>_variant_id= (evaluators, reference §5); a body ref wins.
	forkByQuery bool
}

var testsetKind = kind{fam: versioned.Testsets, key: "testset", plural: "testsets"}

func header(o *obj, h versioned.Header) {
	o.put("name", h.Name).put("description", h.Description).put("flags", h.Flags).put("tags", h.Tags).put("meta", h.Meta)
}

func lifecycle(o *obj, l versioned.Lifecycle) {
	o.put("created_at", l.CreatedAt).put("updated_at", l.UpdatedAt).put("deleted_at", l.DeletedAt)
	o.put("created_by_id", l.CreatedByID).put("updated_by_id", l.UpdatedByID).put("deleted_by_id", l.DeletedByID)
}

func (k kind) artifact(a *versioned.Artifact) *obj {
	o := newObj().put("id", a.ID).put("slug", a.Slug)
	header(o, a.Header)
	o.put("folder_id", a.FolderID)
	lifecycle(o, a.Lifecycle)
	return o
}

func (k kind) variant(v *versioned.Variant) *obj {
	o := newObj().put("id", v.ID).put("slug", v.Slug)
	o.put(k.key+"_id", v.ArtifactID).put(k.key+"_slug", v.ArtifactSlug)
	o.put("artifact_id", v.ArtifactID).put("artifact_slug", v.ArtifactSlug)
	if k.alias != "" {
		o.put(k.alias+"_id", v.ArtifactID).put(k.alias+"_slug", v.ArtifactSlug)
	}
	h := v.Header
	if k.varFlags != nil {
		h.Flags = k.varFlags(v)
	}
	header(o, h)
	lifecycle(o, v.Lifecycle)
	return o
}

// revision renders a revision without its data; withSlugs adds the slug
// aliases that fetch, query and commit fill (log leaves them out).
func (k kind) revision(r *versioned.Revision, withSlugs bool) *obj {
	o := newObj().put("id", r.ID).put("slug", r.Slug).put("version", strconv.Itoa(r.Version))
	o.put(k.key+"_id", r.ArtifactID).put(k.key+"_variant_id", r.VariantID)
	if k.generic {
		o.put("artifact_id", r.ArtifactID).put("variant_id", r.VariantID)
	}
	if k.alias != "" {
		o.put(k.alias+"_id", r.ArtifactID).put(k.alias+"_variant_id", r.VariantID)
	}
	if withSlugs {
		o.put(k.key+"_slug", r.ArtifactSlug).put(k.key+"_variant_slug", r.VariantSlug)
		o.put("artifact_slug", r.ArtifactSlug).put("variant_slug", r.VariantSlug)
		if k.alias != "" {
			o.put(k.alias+"_slug", r.ArtifactSlug).put(k.alias+"_variant_slug", r.VariantSlug)
		}
	}
	h := r.Header
	if k.revFlags != nil {
		h.Flags = k.revFlags(r)
	}
	header(o, h)
	o.put("message", r.Message).put("author", r.Author).put("date", r.Date)
	lifecycle(o, r.Lifecycle)
	return o
}

// envelope renders {"count": n, key: v}, or {"count": 0} when v is nil.
func envelope(key string, v *obj) json.RawMessage {
	if v == nil {
		return newObj().put("count", 0).done()
	}
	inner := v.done()
	e := &obj{b: append(make([]byte, 0, len(inner)+len(key)+32), '{')}
	return e.put("count", 1).put(key, json.RawMessage(inner)).done()
}

// list renders {"count": n, key: [...], "windowing"?: w}.
func list(key string, items []json.RawMessage, win json.RawMessage) json.RawMessage {
	e := newObj().put("count", len(items))
	e.key(key)
	e.b = append(e.b, '[')
	for i, it := range items {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, it...)
	}
	e.b = append(e.b, ']')
	return e.put("windowing", win).done()
}

// nextWindow is the response windowing of a git query: sent when a limit
// was asked and the page is full, so the client resends next = last id.
func nextWindow(win *versioned.Windowing, n int, lastID func() string) json.RawMessage {
	if win == nil || win.Limit == nil || n < win.LimitValue() || n == 0 {
		return nil
	}
	o := newObj().put("next", lastID()).put("limit", win.LimitValue())
	o.put("order", win.Order).put("newest", win.Newest).put("oldest", win.Oldest)
	return o.done()
}
