package testsets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Payload is the payload of a revisions-API commit as sent, decoded by
// CommitFromBase once the testset is known: a delta, or the data object.
type Payload struct {
	// Delta, when not empty, is the delta against the base revision.
	Delta json.RawMessage
	// Data is the data object: {"testcases": [...]} or {"testcase_ids":
	// [...]} (existing blobs); any other key is refused.
	Data map[string]json.RawMessage
	// Loc is where the commit object sits in the request, for field errors.
	Loc []any
}

// CommitFromBase is the commit of the revisions API. A zero c.ArtifactID
// is taken from the base revision c.BaseRevisionID; when neither names a
// testset the answer is a 422 on <Loc>.testset_id. The payload is then
// decoded into c (a malformed delta or data is a 422 at its place; data
// naming unknown testcase ids is a 400) and committed.
func (s *Service) CommitFromBase(ctx context.Context, sc scope.Scope, c Commit, p Payload) (*versioned.Revision, error) {
	at := func(k ...any) []any { return append(append([]any{}, p.Loc...), k...) }
	if c.ArtifactID == uuid.Nil && c.BaseRevisionID != nil {
		base, err := s.reg.Revision(ctx, sc, fam, *c.BaseRevisionID)
		if err != nil {
			return nil, err
		}
		if base != nil {
			c.ArtifactID = base.ArtifactID
		}
	}
	if c.ArtifactID == uuid.Nil {
		return nil, errs.Field("Field required", nil, at("testset_id")...)
	}
	if len(p.Delta) > 0 {
		var d testcases.Delta
		if err := json.Unmarshal(p.Delta, &d); err != nil {
			return nil, errs.Field("Invalid delta: "+err.Error(), p.Delta, at("delta")...)
		}
		c.Delta = &d
		return s.Commit(ctx, sc, c)
	}
	rows, ids, err := ParseData(p.Data, at("data"))
	if err != nil {
		return nil, err
	}
	c.HasData, c.Rows = true, rows
	if rows == nil && ids != nil {
		if c.Rows, err = s.existingRows(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	return s.Commit(ctx, sc, c)
}

// ParseData reads a commit's data object, {"testcases": [...], "testcase_ids": [...]}; any other
// key is a 422, as the compatible platform's data model forbids extras.
func ParseData(data map[string]json.RawMessage, loc []any) (rows []testcases.Row, ids []uuid.UUID, err error) {
	for k := range data {
		if k != "testcases" && k != "testcase_ids" {
			return nil, nil, errs.Field("Extra inputs are not permitted", data[k], append(loc, k)...)
		}
	}
	if raw, ok := data["testcases"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, nil, errs.Field("Input should be a list of testcases: "+err.Error(), nil, append(loc, "testcases")...)
		}
		if rows == nil {
			rows = []testcases.Row{}
		}
		return rows, nil, nil
	}
	if raw, ok := data["testcase_ids"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return nil, nil, errs.Field("Input should be a list of UUIDs", raw, append(loc, "testcase_ids")...)
		}
		if ids == nil {
			ids = []uuid.UUID{}
		}
		return nil, ids, nil
	}
	return []testcases.Row{}, nil, nil
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(bytes.TrimSpace(v)) == "null" }

// existingRows loads the blobs a commit names by id; an unknown id is a 400
// rather than a revision pointing at nothing.
func (s *Service) existingRows(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]testcases.Row, error) {
	tcs, err := s.reg.Testcases(ctx, sc, ids)
	if err != nil {
		return nil, err
	}
	if len(tcs) != len(ids) {
		return nil, versioned.Invalid("data.testcase_ids names testcases that do not exist in this project.")
	}
	return ToRows(tcs)
}

// UploadMessage is the message of a revision committed from a file whose
// name is not known.
const UploadMessage = "Uploaded testset file"

// UploadMessageOf is the message of a revision committed from a file: it
// names the file and its rows, so the history says what each upload was
// ("Uploaded capitals.csv (42 rows)").
func UploadMessageOf(fileName string, rows int) string {
	what := "testset file"
	if fileName != "" {
		what = fileName
	}
	unit := "rows"
	if rows == 1 {
		unit = "row"
	}
	return fmt.Sprintf("Uploaded %s (%d %s)", what, rows, unit)
}

// UploadToRevision commits the rows of an uploaded file as the next
// revision of the variant of revision id, with that revision's header.
// An unknown revision is a 404.
func (s *Service) UploadToRevision(ctx context.Context, sc scope.Scope, id uuid.UUID, rows []testcases.Row, msg string) (*versioned.Revision, error) {
	base, err := s.revision(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if msg == "" {
		msg = UploadMessage
	}
	return s.Commit(ctx, sc, Commit{ArtifactID: base.ArtifactID, VariantID: &base.VariantID, Header: base.Header,
		Message: &msg, HasData: true, Rows: rows, Dedup: true})
}

// RevisionRows returns the rows of revision id, for a download; an
// unknown revision is a 404.
func (s *Service) RevisionRows(ctx context.Context, sc scope.Scope, id uuid.UUID) ([]testcases.Row, error) {
	r, err := s.revision(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	return s.Rows(ctx, sc, r)
}

// revision returns revision id, or the 404 of the revision routes.
func (s *Service) revision(ctx context.Context, sc scope.Scope, id uuid.UUID) (*versioned.Revision, error) {
	r, err := s.reg.Revision(ctx, sc, fam, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, versioned.NotFound("Testset revision not found.")
	}
	return r, nil
}

// Resolve returns the testset revision refs name, or nil.
func (s *Service) Resolve(ctx context.Context, sc scope.Scope, refs versioned.Refs) (*versioned.Revision, error) {
	return s.reg.Resolve(ctx, sc, fam, "testset", refs)
}

// Blobs returns the testcases with the given ids, in the project.
func (s *Service) Blobs(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]versioned.Testcase, error) {
	return s.reg.Testcases(ctx, sc, ids)
}

// UploadEditSimple replaces the rows of a simple testset with an uploaded
// file's; header gives the new header from the current one (the form's
// fields override it). An unknown testset is a 404.
func (s *Service) UploadEditSimple(ctx context.Context, sc scope.Scope, id uuid.UUID,
	header func(cur *versioned.Header) (versioned.Header, error), rows []testcases.Row, msg string,
) (*Simple, error) {
	cur, err := s.reg.Artifact(ctx, sc, fam, id)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, errTestsetNotFound
	}
	h, err := header(&cur.Header)
	if err != nil {
		return nil, err
	}
	in := SimpleInput{Header: h, Rows: rows}
	if msg != "" {
		in.Message = &msg
	}
	rec, err := s.EditSimple(ctx, sc, id, in)
	if err == nil && rec == nil {
		return nil, errTestsetNotFound
	}
	return rec, err
}

var errTestsetNotFound = versioned.NotFound("Testset not found.")

// TestcaseQuery selects testcases by one of: a testset reference (the
// resolved revision's ids, windowed), ids, or the testset's blobs.
type TestcaseQuery struct {
	Refs   versioned.Refs
	IDs    []uuid.UUID
	HasIDs bool
	SetID  *uuid.UUID
	Window *versioned.Windowing
}

// TestcasePage is the answer of QueryTestcases. For a reference query,
// Resolved tells whether it named a revision and More whether Page (the
// window over its ids) was cut.
type TestcasePage struct {
	Testcases []versioned.Testcase
	Resolved  bool
	Page      []uuid.UUID
	More      bool
}

// QueryTestcases runs q; a query naming nothing is a 400.
func (s *Service) QueryTestcases(ctx context.Context, sc scope.Scope, q TestcaseQuery) (*TestcasePage, error) {
	var out TestcasePage
	var err error
	switch {
	case !q.Refs.Empty():
		r, err := s.Resolve(ctx, sc, q.Refs)
		if err != nil || r == nil {
			return &out, err
		}
		out.Resolved = true
		out.Page, out.More = PageIDs(r.TestcaseIDs, q.Window)
		out.Testcases, err = s.reg.Testcases(ctx, sc, out.Page)
		return &out, err
	case q.HasIDs:
		out.Testcases, err = s.reg.Testcases(ctx, sc, q.IDs)
		return &out, err
	case q.SetID != nil:
		out.Testcases, err = s.reg.TestcasesBySet(ctx, sc, *q.SetID, q.Window)
		return &out, err
	}
	return nil, versioned.Invalid("Provide testcase_ids, testset_id or a testset, variant or revision reference.")
}

// PageIDs applies list windowing to an ordered id list: descending
// reverses it, next starts after that id (unknown: empty), limit cuts.
func PageIDs(ids []uuid.UUID, w *versioned.Windowing) (page []uuid.UUID, more bool) {
	if w == nil {
		return ids, false
	}
	page = ids
	if w.Order != nil && *w.Order == "descending" {
		page = make([]uuid.UUID, len(ids))
		for i, id := range ids {
			page[len(ids)-1-i] = id
		}
	}
	if w.Next != nil {
		at := -1
		for i, id := range page {
			if id == *w.Next {
				at = i
				break
			}
		}
		page = page[at+1:]
		if at < 0 {
			page = nil
		}
	}
	if n := w.LimitValue(); n > 0 && len(page) > n {
		return page[:n], true
	}
	return page, false
}

// rules are the testset family's rules of the git model: none beyond it.
type rules struct{ versioned.PlainRules }

func (rules) Family() versioned.Family { return fam }

// Lineage returns the testset git model (artifacts, variants, revisions).
func (s *Service) Lineage() *versioned.Lineage {
	var reg *versioned.Service
	if s != nil { // routes over no services are still listed (the OpenAPI test)
		reg = s.reg
	}
	return reg.Lineage(rules{})
}
