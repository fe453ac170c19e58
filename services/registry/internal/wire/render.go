package wire

import (
	"encoding/json"
	"strconv"

	"github.com/google/uuid"

	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// Entity is how one family's records are named and listed on the wire:
// the entity key ("testset") and its plural, which alias ids its records
// carry, and the compatible platform's variations on the shared git routes. It
// renders artifacts, variants and revisions the same for every route.
type Entity struct {
	Key    string // testset, workflow, application, evaluator, environment, query
	Plural string
	// Generic: revisions and variants also carry artifact_id/variant_id
	// (every family but testsets).
	Generic bool
	// Alias is a second entity prefix the ids are also sent under
	// ("workflow" for applications and evaluators).
	Alias string
	// RevisionFlags and VariantFlags, when set, compute the flags a
	// revision or a variant shows (workflow revisions merge the artifact's
	// role flags; workflow variants show the artifact's flags as their own).
	RevisionFlags func(r *versioned.Revision) json.RawMessage
	VariantFlags  func(v *versioned.Variant) json.RawMessage
	// NoWindowing: list responses never carry windowing.
	NoWindowing bool
	// VariantWindowing: variant lists carry windowing too (only the
	// workflow family's, evaluators excepted; testset variant lists never do).
	VariantWindowing bool
	// URLQuery names the query levels ("artifact", "variant", "revision")
	// that also take URL query parameters (ReadQuery).
	URLQuery map[string]bool
	// ForkByQuery: fork also takes the source variant as
	// ?<e>_variant_id= (evaluators, as the compatible platform's); a body
	// ref wins.
	ForkByQuery bool
}

// The families' entities.
var (
	Testset     = Entity{Key: "testset", Plural: "testsets"}
	Environment = Entity{Key: "environment", Plural: "environments", Generic: true, NoWindowing: true,
		URLQuery: map[string]bool{"artifact": true, "variant": true, "revision": true}}
	Query = Entity{Key: "query", Plural: "queries", Generic: true, NoWindowing: true,
		URLQuery: map[string]bool{"artifact": true}}
)

// Workflow is the entity of one role of the workflow family: plain
// workflows, applications or evaluators share the tables and slugs.
func Workflow(key, plural string) Entity {
	k := Entity{Key: key, Plural: plural, Generic: true,
		RevisionFlags: workflows.RevisionFlags,
		VariantFlags:  func(v *versioned.Variant) json.RawMessage { return v.ArtifactFlags }}
	k.URLQuery = map[string]bool{"variant": true}
	if key != "workflow" {
		k.Alias = "workflow"
	} else {
		k.URLQuery["artifact"], k.URLQuery["revision"] = true, true
	}
	switch key {
	case "evaluator":
		k.NoWindowing, k.ForkByQuery = true, true
	default:
		k.VariantWindowing = true
	}
	return k
}

// Header renders name, description, flags, tags and meta.
func Header(o *Obj, h versioned.Header) {
	o.Put("name", h.Name).Put("description", h.Description).Put("flags", h.Flags).Put("tags", h.Tags).Put("meta", h.Meta)
}

// Lifecycle renders the created/updated/deleted times and authors.
func Lifecycle(o *Obj, l versioned.Lifecycle) {
	o.Put("created_at", l.CreatedAt).Put("updated_at", l.UpdatedAt).Put("deleted_at", l.DeletedAt)
	o.Put("created_by_id", l.CreatedByID).Put("updated_by_id", l.UpdatedByID).Put("deleted_by_id", l.DeletedByID)
}

// Artifact renders an artifact.
func (k Entity) Artifact(a *versioned.Artifact) *Obj {
	o := NewObj().Put("id", a.ID).Put("slug", a.Slug)
	Header(o, a.Header)
	o.Put("folder_id", a.FolderID)
	Lifecycle(o, a.Lifecycle)
	return o
}

// Variant renders a variant with its artifact's id and slug aliases.
func (k Entity) Variant(v *versioned.Variant) *Obj {
	o := NewObj().Put("id", v.ID).Put("slug", v.Slug)
	o.Put(k.Key+"_id", v.ArtifactID).Put(k.Key+"_slug", v.ArtifactSlug)
	o.Put("artifact_id", v.ArtifactID).Put("artifact_slug", v.ArtifactSlug)
	if k.Alias != "" {
		o.Put(k.Alias+"_id", v.ArtifactID).Put(k.Alias+"_slug", v.ArtifactSlug)
	}
	h := v.Header
	if k.VariantFlags != nil {
		h.Flags = k.VariantFlags(v)
	}
	Header(o, h)
	Lifecycle(o, v.Lifecycle)
	return o
}

// Revision renders a revision without its data; withSlugs adds the slug
// aliases that fetch, query and commit fill (log leaves them out).
func (k Entity) Revision(r *versioned.Revision, withSlugs bool) *Obj {
	o := NewObj().Put("id", r.ID).Put("slug", r.Slug).Put("version", strconv.Itoa(r.Version))
	o.Put(k.Key+"_id", r.ArtifactID).Put(k.Key+"_variant_id", r.VariantID)
	if k.Generic {
		o.Put("artifact_id", r.ArtifactID).Put("variant_id", r.VariantID)
	}
	if k.Alias != "" {
		o.Put(k.Alias+"_id", r.ArtifactID).Put(k.Alias+"_variant_id", r.VariantID)
	}
	if withSlugs {
		o.Put(k.Key+"_slug", r.ArtifactSlug).Put(k.Key+"_variant_slug", r.VariantSlug)
		o.Put("artifact_slug", r.ArtifactSlug).Put("variant_slug", r.VariantSlug)
		if k.Alias != "" {
			o.Put(k.Alias+"_slug", r.ArtifactSlug).Put(k.Alias+"_variant_slug", r.VariantSlug)
		}
	}
	h := r.Header
	if k.RevisionFlags != nil {
		h.Flags = k.RevisionFlags(r)
	}
	Header(o, h)
	o.Put("message", r.Message).Put("author", r.Author).Put("date", r.Date)
	Lifecycle(o, r.Lifecycle)
	return o
}

// RetrievalInfo renders {"references": {<e>, <e>_variant, <e>_revision}}
// for a resolved revision r. When r was read through an environment
// (env not nil), the references start with the environment's and a
// selector names the deployment's key.
func (k Entity) RetrievalInfo(r, env *versioned.Revision, key string) json.RawMessage {
	refs := NewObj()
	if env != nil {
		refs3(refs, "environment", env)
	}
	refs3(refs, k.Key, r)
	info := NewObj().Put("references", json.RawMessage(refs.Done()))
	if env != nil {
		info.Put("selector", map[string]string{"key": key})
	}
	return info.Done()
}

// refs3 puts the artifact, variant and revision references of r under
// key, key_variant and key_revision.
func refs3(o *Obj, key string, r *versioned.Revision) {
	v := strconv.Itoa(r.Version)
	o.Put(key, versioned.Ref{ID: &r.ArtifactID, Slug: &r.ArtifactSlug}).
		Put(key+"_variant", versioned.Ref{ID: &r.VariantID, Slug: &r.VariantSlug}).
		Put(key+"_revision", versioned.Ref{ID: &r.ID, Slug: &r.Slug, Version: &v})
}

// Record renders the flat record of a /simple surface, showing flags;
// withIDs adds the variant and revision ids.
func Record(rec *versioned.Record, flags json.RawMessage, withIDs bool) *Obj {
	a, v, r := rec.Artifact, rec.Variant, rec.Revision
	o := NewObj().Put("id", a.ID).Put("slug", a.Slug)
	Header(o, versioned.Header{Name: a.Name, Description: a.Description, Flags: flags, Tags: a.Tags, Meta: a.Meta})
	Lifecycle(o, a.Lifecycle)
	if r != nil {
		o.Put("data", r.Data)
	}
	if withIDs {
		if v != nil {
			o.Put("variant_id", v.ID)
		}
		if r != nil {
			o.Put("revision_id", r.ID)
		}
	}
	return o
}

// SimpleTestset renders the flat testset record. Unlike the compatible platform we
// always include variant_id and revision_id: a client polling the record
// needs them to pin what it read.
func SimpleTestset(rec *testsets.Simple, withData bool) *Obj {
	a := rec.Artifact
	o := NewObj().Put("id", a.ID).Put("slug", a.Slug)
	Header(o, a.Header)
	Lifecycle(o, a.Lifecycle)
	if rec.Variant != nil {
		o.Put("variant_id", rec.Variant.ID)
	}
	if rec.Revision != nil {
		o.Put("revision_id", rec.Revision.ID)
		if withData && rec.Revision.TestcaseIDs != nil {
			o.Put("data", TestcaseData(rec.Revision.TestcaseIDs, rec.Testcases, true, true))
		}
	}
	return o
}

// Envelope renders {"count": 1, key: v}, or {"count": 0} when v is nil.
func Envelope(key string, v *Obj) json.RawMessage {
	if v == nil {
		return NewObj().Put("count", 0).Done()
	}
	inner := v.Done()
	return NewObjSize(len(inner)+len(key)+32).Put("count", 1).Put(key, json.RawMessage(inner)).Done()
}

// List renders {"count": n, key: [...], "windowing"?: w}.
func List(key string, items []json.RawMessage, win json.RawMessage) json.RawMessage {
	e := NewObj().Put("count", len(items))
	e.Key(key)
	e.b = append(e.b, '[')
	for i, it := range items {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, it...)
	}
	e.b = append(e.b, ']')
	return e.Put("windowing", win).Done()
}

// ListWindow is the response windowing of a page of ids cut from a
// list (a revision's testcases): sent when more follow.
func ListWindow(w *versioned.Windowing, page []uuid.UUID, more bool) json.RawMessage {
	if !more || len(page) == 0 {
		return nil
	}
	return NewObj().Put("next", page[len(page)-1]).Put("limit", w.LimitValue()).
		Put("order", w.Order).Put("newest", w.Newest).Put("oldest", w.Oldest).Done()
}

// NextWindow is the response windowing of a git query: sent when a limit
// was asked and the page is full, so the client resends next = last id.
func NextWindow(win *versioned.Windowing, n int, lastID func() string) json.RawMessage {
	if win == nil || win.Limit == nil || n < win.LimitValue() || n == 0 {
		return nil
	}
	o := NewObj().Put("next", lastID()).Put("limit", win.LimitValue())
	o.Put("order", win.Order).Put("newest", win.Newest).Put("oldest", win.Oldest)
	return o.Done()
}

// AppendTestcase renders one testcase; withSetID adds set_id, which only
// the /testcases routes show.
func AppendTestcase(b []byte, tc *versioned.Testcase, withSetID bool) []byte {
	o := ObjOn(b)
	o.Put("id", tc.ID)
	if tc.SetID != nil {
		o.Put("testset_id", *tc.SetID)
		if withSetID {
			o.Put("set_id", *tc.SetID)
		}
	}
	o.Put("data", tc.Data).Put("flags", tc.Flags).Put("tags", tc.Tags).Put("meta", tc.Meta)
	o.Put("created_at", tc.CreatedAt).Put("created_by_id", tc.CreatedByID)
	return o.Done()
}

// TestcasesSize estimates the rendered size of tcs, so a response of
// 100,000 rows is built in one allocation instead of a chain of doublings.
func TestcasesSize(tcs []versioned.Testcase) int {
	n := 0
	for i := range tcs {
		n += len(tcs[i].Data) + len(tcs[i].Flags) + len(tcs[i].Tags) + len(tcs[i].Meta) + 256
	}
	return n
}

// AppendTestcases renders tcs as a JSON list.
func AppendTestcases(b []byte, tcs []versioned.Testcase, withSetID bool) []byte {
	b = append(b, '[')
	for i := range tcs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendTestcase(b, &tcs[i], withSetID)
	}
	return append(b, ']')
}

// AppendIDs renders ids as a JSON list of strings.
func AppendIDs(b []byte, ids []uuid.UUID) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), id.String()...), '"')
	}
	return append(b, ']')
}

// TestcaseData renders {"testcase_ids": [...], "testcases": [...]}.
func TestcaseData(ids []uuid.UUID, tcs []versioned.Testcase, withIDs, withTestcases bool) json.RawMessage {
	o := NewObjSize(TestcasesSize(tcs) + 40*len(ids) + 64)
	if withIDs {
		o.Key("testcase_ids")
		o.b = AppendIDs(o.b, ids)
	}
	if withTestcases {
		o.Key("testcases")
		o.b = AppendTestcases(o.b, tcs, false)
	}
	return o.Done()
}
