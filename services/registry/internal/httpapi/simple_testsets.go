package httpapi

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

func sendSimple(c echo.Context, rec *testsets.Simple, err error) error {
	return sendOne(c, "testset", rec, err, func(r *testsets.Simple) *wire.Obj { return wire.SimpleTestset(r, true) })
}

// simpleInput reads {"testset": {slug?, name, description, tags, meta, data: {testcases}}}.
func simpleInput(b *wire.Body) (*wire.Body, testsets.SimpleInput, error) {
	in := b.Require("testset")
	if err := wire.ErrOf(b); err != nil {
		return nil, testsets.SimpleInput{}, err
	}
	si := testsets.SimpleInput{Header: in.Header(), JSONBody: true}
	si.Header.Flags = nil // the simple surface has no testset flags
	if data := in.Sub("data"); data != nil {
		rows, ids, err := testsets.ParseData(data.Map(), append(in.Loc(), "data"))
		if err != nil {
			return nil, si, err
		}
		if ids != nil {
			return nil, si, errs.Field("The simple surface takes rows under data.testcases", nil, append(in.Loc(), "data", "testcase_ids")...)
		}
		si.Rows = rows
	}
	return in, si, wire.ErrOf(in)
}

func (a *testsetAPI) createSimple(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	in, si, err := simpleInput(b)
	if err != nil {
		return err
	}
	slug := in.Slug("slug")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if si.Slug, err = slugOrName(slug, si.Header.Name, "testset"); err != nil {
		return err
	}
	if si.ID, err = queryID(c, "testset_id"); err != nil {
		return err
	}
	rec, err := a.ts.CreateSimple(c.Request().Context(), sc, si)
	return sendSimple(c, rec, err)
}

func (a *testsetAPI) editSimple(rq *req) error {
	c, sc, id, b := rq.c, rq.sc, rq.id, rq.b
	in, si, err := simpleInput(b)
	if err != nil {
		return err
	}
	bid := in.ID("id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		return versioned.Invalid("The testset id in the path and in the body must match.")
	}
	rec, err := a.ts.EditSimple(c.Request().Context(), sc, id, si)
	if err == nil && rec == nil {
		return versioned.NotFound("Testset not found.")
	}
	return sendSimple(c, rec, err)
}

func (a *testsetAPI) archiveSimple(archived bool) echo.HandlerFunc {
	return handle(true, func(rq *req) error {
		c, sc, id := rq.c, rq.sc, rq.id
		art, err := a.ts.ArchiveSimple(c.Request().Context(), sc, id, archived)
		if err != nil || art == nil {
			return sendSimple(c, nil, err)
		}
		return send(c, wire.Envelope("testset", wire.SimpleTestset(&testsets.Simple{Artifact: art}, false)))
	})
}

func (a *testsetAPI) querySimple(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	q := b.Query("testset", "testset")
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	page, err := a.ts.QuerySimple(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	items := renderAll(page.Testsets, func(r *testsets.Simple) *wire.Obj { return wire.SimpleTestset(r, true) })
	// The compatible platform sends no windowing here; this one is sent only when a
	// full page leaves more to read, and clients that do not page ignore it.
	win := wire.NextWindow(page.Window, page.Artifacts, page.LastID.String)
	return send(c, wire.List("testsets", items, win))
}

func (a *testsetAPI) uploadSimple(rq *req) error {
	c, sc := rq.c, rq.sc
	form, err := readUpload(c, a.ts.Limits())
	if err != nil {
		return err
	}
	h, err := form.Header(nil)
	if err != nil {
		return err
	}
	slug := form.Fields["testset_slug"]
	if slug != "" && !wire.ValidSlug(slug) {
		return wire.FieldInvalid("'slug' must be URL-safe.", slug, "body", "testset_slug")
	}
	id, err := queryID(c, "testset_id")
	if err != nil {
		return err
	}
	msg := testsets.UploadMessageOf(form.FileName, len(form.Rows))
	rec, err := a.ts.CreateSimple(c.Request().Context(), sc, testsets.SimpleInput{ID: id, Slug: slug, Header: h, Rows: form.Rows,
		Message: &msg})
	return sendSimple(c, rec, err)
}

func (a *testsetAPI) uploadSimpleEdit(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	form, err := readUpload(c, a.ts.Limits())
	if err != nil {
		return err
	}
	rec, err := a.ts.UploadEditSimple(c.Request().Context(), sc, id, func(cur *versioned.Header) (versioned.Header, error) {
		return form.Header(cur)
	}, form.Rows, testsets.UploadMessageOf(form.FileName, len(form.Rows)))
	return sendSimple(c, rec, err)
}

func (a *testsetAPI) downloadSimple(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	fileType := c.QueryParam("file_type")
	if fileType != "csv" && fileType != "json" {
		return versioned.Invalid("file_type is required and must be 'csv' or 'json'.")
	}
	ids, err := includeIDs(c)
	if err != nil {
		return err
	}
	rec, err := a.ts.GetSimple(c.Request().Context(), sc, id)
	if err != nil {
		return err
	}
	if rec == nil {
		return versioned.NotFound("Testset not found.")
	}
	rows, err := testsets.ToRows(rec.Testcases)
	if err != nil {
		return err
	}
	return sendFile(c, rows, fileType, tcfile.FileName(c.QueryParam("file_name"), "testset_"+id.String(), fileType), ids)
}

// ---- testcases

func (a *testsetAPI) testcasesByID(rq *req) error {
	c, sc := rq.c, rq.sc
	var ids []uuid.UUID
	raw := c.QueryParams()["testcase_id"]
	for _, v := range c.QueryParams()["testcase_ids"] {
		raw = append(raw, strings.Split(v, ",")...)
	}
	for _, v := range raw {
		id, err := uuid.Parse(strings.TrimSpace(v))
		if err != nil {
			return wire.FieldInvalid("Input should be a valid UUID", v, "query", "testcase_id")
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return versioned.Invalid("At least one testcase_id query parameter is required.")
	}
	tcs, err := a.ts.Blobs(c.Request().Context(), sc, ids)
	if err != nil {
		return err
	}
	return sendTestcases(c, tcs, nil)
}

func sendTestcases(c echo.Context, tcs []versioned.Testcase, win json.RawMessage) error {
	o := wire.NewObjSize(wire.TestcasesSize(tcs)+64).Put("count", len(tcs))
	o.Key("testcases")
	o.Append(func(b []byte) []byte { return wire.AppendTestcases(b, tcs, true) })
	return send(c, o.Put("windowing", win).Done())
}

func (a *testsetAPI) testcase(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	tcs, err := a.ts.Blobs(c.Request().Context(), sc, []uuid.UUID{id})
	if err != nil {
		return err
	}
	if len(tcs) == 0 {
		return send(c, wire.Envelope("testcase", nil))
	}
	o := wire.NewObj().Put("count", 1)
	o.Key("testcase")
	o.Append(func(b []byte) []byte { return wire.AppendTestcase(b, &tcs[0], true) })
	return send(c, o.Done())
}

func (a *testsetAPI) queryTestcases(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	var ids []uuid.UUID
	hasIDs := b.Decode(&ids, "Input should be a list of UUIDs", "testcase_ids")
	setID := b.ID("testset_id")
	refs := versioned.Refs{Artifact: b.Ref("testset_ref"), Variant: b.Ref("testset_variant_ref"), Revision: b.Ref("testset_revision_ref")}
	win := b.Windowing()
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	q := testsets.TestcaseQuery{Refs: refs, IDs: ids, HasIDs: hasIDs, SetID: setID, Window: win}
	res, err := a.ts.QueryTestcases(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	tcs := res.Testcases
	switch {
	case !refs.Empty():
		if !res.Resolved {
			return send(c, wire.NewObj().Put("count", 0).Done())
		}
		return sendTestcases(c, tcs, wire.ListWindow(win, res.Page, res.More))
	case setID != nil && !hasIDs:
		var next json.RawMessage
		if n := win.LimitValue(); n > 0 && len(tcs) >= n {
			last := tcs[len(tcs)-1]
			next = wire.NewObj().Put("next", last.ID).Put("oldest", last.CreatedAt).Put("limit", n).Put("order", win.Order).Done()
		}
		return sendTestcases(c, tcs, next)
	}
	return sendTestcases(c, tcs, nil)
}
