package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// testsetAPI serves /testsets, /simple/testsets and /testcases.
type testsetAPI struct {
	*git
	ts *testsets.Service
}

func newTestsetAPI(ts *testsets.Service) *testsetAPI {
	a := &testsetAPI{ts: ts}
	a.git = &git{k: testsetKind, lin: ts.Lineage()}
	a.git.fam = a
	return a
}

func (a *testsetAPI) route(e *echo.Echo) {
	a.git.route(e)
	e.POST("/testsets/revisions", handle(false, a.createRevision))
	e.POST("/testsets/revisions/commit", withCommit("testset_revision", a.commit))
	e.POST("/testsets/revisions/retrieve", handle(false, a.retrieve))
	e.POST("/testsets/revisions/:id/upload", stream(true, a.uploadRevision))
	e.POST("/testsets/revisions/:id/download", stream(true, a.downloadRevision))

	e.POST("/simple/testsets", handle(false, a.createSimple))
	e.GET("/simple/testsets/:id", byID(a.ts.GetSimple, sendSimple))
	e.PUT("/simple/testsets/:id", handle(true, a.editSimple))
	e.POST("/simple/testsets/:id/archive", a.archiveSimple(true))
	e.POST("/simple/testsets/:id/unarchive", a.archiveSimple(false))
	e.POST("/simple/testsets/query", handle(false, a.querySimple))
	e.POST("/simple/testsets/upload", stream(false, a.uploadSimple))
	e.POST("/simple/testsets/:id/upload", stream(true, a.uploadSimpleEdit))
	e.POST("/simple/testsets/:id/download", stream(true, a.downloadSimple))

	e.GET("/testcases", stream(false, a.testcasesByID))
	e.GET("/testcases/:id", handle(true, a.testcase))
	e.POST("/testcases/query", handle(false, a.queryTestcases))
}

// ---- rendering

// revisionData adds a testset revision's data, paging its id list when the
// request carries windowing.
func (a *testsetAPI) revisionData(ctx context.Context, sc scope.Scope, o *wire.Obj, r *versioned.Revision, opts readOpts) error {
	if r.TestcaseIDs == nil {
		return nil
	}
	ids, _ := testsets.PageIDs(r.TestcaseIDs, opts.window)
	var tcs []versioned.Testcase
	if opts.includeTestcases {
		var err error
		if tcs, err = a.ts.Blobs(ctx, sc, ids); err != nil {
			return err
		}
	}
	o.Put("data", wire.TestcaseData(ids, tcs, opts.includeTestcaseIDs, opts.includeTestcases))
	return nil
}

// ---- revisions

func (a *testsetAPI) createRevision(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	in := b.Require("testset_revision")
	opts := testcaseOpts(c, b)
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r := in.Revision("testset", false, true)
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if r.ArtifactID == nil || r.VariantID == nil {
		return send(c, wire.Envelope("testset_revision", nil))
	}
	msg := wire.InitialMessage
	cm := testsets.Commit{Header: r.Header, Initial: true, ArtifactID: *r.ArtifactID, VariantID: r.VariantID, Slug: r.SlugOr(), Message: &msg}
	out, err := a.ts.Commit(c.Request().Context(), sc, cm)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, out, opts)
}

// commit serves /testsets/revisions/commit (wire.TestsetCommit).
func (a *testsetAPI) commit(rq *req, in *wire.Body, key string) error {
	c, sc, b := rq.c, rq.sc, rq.b
	opts := testcaseOpts(c, b)
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	cm, p, err := wire.TestsetCommit(in)
	if err != nil {
		return err
	}
	r, err := a.ts.CommitFromBase(c.Request().Context(), sc, cm, p)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, r, opts)
}

func (a *testsetAPI) retrieve(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	refs := versioned.Refs{Artifact: b.Ref("testset_ref"), Variant: b.Ref("testset_variant_ref"), Revision: b.Ref("testset_revision_ref")}
	opts := readOpts{includeTestcases: b.Bool(true, "include_testcases"), includeTestcaseIDs: b.Bool(true, "include_testcase_ids"),
		window: b.Windowing(), withSlugs: true}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r, err := a.ts.Resolve(c.Request().Context(), sc, refs)
	if err != nil || r == nil {
		if err == nil {
			return send(c, wire.Envelope("testset_revision", nil))
		}
		return err
	}
	page, more := testsets.PageIDs(r.TestcaseIDs, opts.window)
	return a.git.sendRevision(c, sc, r, opts, a.git.retrievalInfo(r), func(e *wire.Obj) {
		e.Put("windowing", wire.ListWindow(opts.window, page, more))
	})
}

// ---- files

// readUpload reads the multipart upload of c (wire.ReadForm).
func readUpload(c echo.Context, limits tcfile.Limits) (*wire.Form, error) {
	mr, err := c.Request().MultipartReader()
	if err != nil {
		return nil, errs.New(errs.Invalid, "testsets.bad_form", "Expected a multipart/form-data body with a 'file' part.")
	}
	return wire.ReadForm(mr, limits)
}

func (a *testsetAPI) uploadRevision(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	form, err := readUpload(c, a.ts.Limits())
	if err != nil {
		return err
	}
	r, err := a.ts.UploadToRevision(c.Request().Context(), sc, id, form.Rows, testsets.UploadMessageOf(form.FileName, len(form.Rows)))
	if err != nil {
		return err
	}
	opts := readOpts{includeTestcases: form.Fields["include_testcases"] != "false", includeTestcaseIDs: true, withSlugs: true}
	return a.git.sendRevision(c, sc, r, opts)
}

func (a *testsetAPI) downloadRevision(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	fileType := c.QueryParam("file_type")
	if fileType == "" {
		fileType = "csv"
	}
	if fileType != "csv" && fileType != "json" {
		return versioned.Invalid("file_type must be 'csv' or 'json'.")
	}
	ids, err := includeIDs(c)
	if err != nil {
		return err
	}
	rows, err := a.ts.RevisionRows(c.Request().Context(), sc, id)
	if err != nil {
		return err
	}
	return sendFile(c, rows, fileType, tcfile.FileName(c.QueryParam("file_name"), "revision_"+id.String(), fileType), ids)
}

// includeIDs reads the downloads' include_ids query parameter. The
// compatible platform always exports __dedup_id__ and __id__; none of its
// clients downloads (docs/api.md), and people opening the file do not want two
// columns of hashes, so they are left out unless asked for (a file meant
// to be edited and uploaded again keeps its rows' identity with them).
func includeIDs(c echo.Context) (bool, error) {
	switch v := c.QueryParam("include_ids"); v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	default:
		return false, wire.FieldInvalid("Input should be a valid boolean", v, "query", "include_ids")
	}
}

// sendFile streams rows as a CSV or JSON attachment, with the id columns
// or without them.
func sendFile(c echo.Context, rows []testcases.Row, fileType, name string, ids bool) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+strings.ReplaceAll(name, `"`, "")+`"`)
	if fileType == "json" {
		h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		c.Response().WriteHeader(http.StatusOK)
		if ids {
			return tcfile.WriteJSON(c.Response(), rows)
		}
		return tcfile.WriteJSONData(c.Response(), rows)
	}
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	c.Response().WriteHeader(http.StatusOK)
	if ids {
		return tcfile.WriteCSV(c.Response(), rows)
	}
	return tcfile.WriteCSVData(c.Response(), rows)
}
