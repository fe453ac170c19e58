package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// evaluationReadAPI serves the evaluation reads that are ours (the
// compatible platform has none): the comparison of runs and the export of a run.
type evaluationReadAPI struct {
	reports *evalreports.Reports
	// lookups read the testcases and outputs a CSV export shows.
	lookups evalreports.ExportLookups
}

// exportLookups reads a CSV export's testcases from the testsets and its
// outputs from the traces, through the saved queries' tracing client.
type exportLookups struct {
	ts *testsets.Service
	qs *queries.Service
}

func (l exportLookups) TestcaseData(ctx context.Context, sc scope.Scope, ids []uuid.UUID) (map[uuid.UUID]map[string]json.RawMessage, error) {
	tcs, err := l.ts.Blobs(ctx, sc, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]map[string]json.RawMessage, len(tcs))
	for _, tc := range tcs {
		var d map[string]json.RawMessage
		if json.Unmarshal(tc.Data, &d) == nil {
			out[tc.ID] = d
		}
	}
	return out, nil
}

func (l exportLookups) TraceOutputs(ctx context.Context, sc scope.Scope, traceIDs []string) (map[string]json.RawMessage, error) {
	return l.qs.RootOutputs(ctx, sc, traceIDs)
}

func (a evaluationReadAPI) route(e *echo.Echo) {
	e.POST("/evaluations/runs/compare", handle(false, a.compare))
	e.GET("/evaluations/runs/:id/export", stream(true, a.export))
}

// compare is POST /evaluations/runs/compare {run_ids} → {count, comparison}.
func (a evaluationReadAPI) compare(rq *req) error {
	var ids []string
	if !rq.b.Decode(&ids, "Input should be a valid list of run ids", "run_ids") {
		if err := wire.ErrOf(rq.b); err != nil {
			return err
		}
		return errs.Field("Field required", nil, "body", "run_ids")
	}
	c, err := a.reports.Compare(rq.ctx, rq.sc, ids)
	if err != nil {
		return err
	}
	return rq.c.JSON(http.StatusOK, map[string]any{"count": 1, "comparison": c})
}

// export is GET /evaluations/runs/{id}/export?format=csv|json (csv by
// default), streamed: the status and headers go out before the first
// page is read, so an error after that ends the response early (a JSON
// export is then left unclosed, which a client can tell).
func (a evaluationReadAPI) export(rq *req) error {
	format := rq.c.QueryParam("format")
	if format == "" {
		format = evalreports.FormatCSV
	}
	x, err := a.reports.PrepareExport(rq.ctx, rq.sc, rq.id, format)
	if err != nil {
		return err
	}
	res := rq.c.Response()
	var w evalreports.RowWriter
	if format == evalreports.FormatCSV {
		res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		x.NameColumns() // headers for people: evaluator and output names
		w = evalreports.NewCSVWriter(res)
		if a.lookups != nil {
			w = x.WithInputsOutputs(rq.ctx, rq.sc, a.lookups, w)
		}
	} else {
		res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		w = evalreports.NewJSONWriter(res, x.Run.ID)
	}
	res.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="run-%s.%s"`, x.Run.ID, format))
	res.WriteHeader(http.StatusOK)
	return x.Write(rq.ctx, w)
}
