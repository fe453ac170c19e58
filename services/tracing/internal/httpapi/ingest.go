package httpapi

// The native ingest routes: /spans/ingest (and /tracing/spans/ingest) take
// spans flat or nested, /traces/ingest a list of nested traces. A bad span
// costs only itself and is reported with why.

import (
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// requestKey identifies a request for JetStream's duplicate detection: the
// same body sent again to the same route (a client retry) is stored once.
func requestKey(c echo.Context, body []byte) []byte {
	return append([]byte(c.Request().Method+" "+c.Request().URL.Path+"\n"), body...)
}

func readJSON(c echo.Context) ([]byte, map[string]any, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, nil, errs.Wrap(errs.Invalid, "request.unreadable_body", err)
	}
	m, err := ingest.DecodeJSON(body)
	return body, m, err
}

type ingestResponse struct {
	Count    int               `json:"count"`
	Links    []ingest.Link     `json:"links"`
	Rejected []rejectedSpanOut `json:"rejected,omitempty"`
}

type rejectedSpanOut struct {
	Index  int    `json:"index"`
	Detail string `json:"detail"`
}

func rejectedOut(rs []spanmodel.Error) []rejectedSpanOut {
	out := make([]rejectedSpanOut, 0, len(rs))
	for _, r := range rs {
		out = append(out, rejectedSpanOut{Index: r.Index, Detail: r.Msg})
	}
	return out
}

// ingestSpans takes the flat and nested native forms; 202 with the
// accepted spans, and (beyond the compatible platform) the rejected ones with why.
func (h *Handler) ingestSpans(c echo.Context, sc scope.Scope) error {
	body, m, err := readJSON(c)
	if err != nil {
		return err
	}
	_, hasSpans := m["spans"]
	_, hasTraces := m["traces"]
	if !hasSpans && !hasTraces {
		return errs.WithDetail(errs.Invalid, "tracing.missing_spans", "Missing spans", "body needs \"spans\" (a list) or \"traces\" (an object)")
	}
	raws, parseRejected, err := ingest.NativeSpans(m)
	if err != nil {
		return err
	}
	res, err := h.Ingest.Ingest(c.Request().Context(), sc, raws, requestKey(c, body))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links, Rejected: rejectedOut(append(parseRejected, res.Rejected...))})
}

func (h *Handler) ingestTraces(c echo.Context, sc scope.Scope) error {
	body, m, err := readJSON(c)
	if err != nil {
		return err
	}
	list, terr := ingest.As[[]any](m["traces"], "traces")
	if terr != nil {
		return terr.Field()
	}
	if len(list) == 0 {
		return errs.New(errs.Invalid, "tracing.missing_traces", "Missing traces")
	}
	var raws []spanmodel.Raw
	var traceOf []int // the position in traces of each raw span
	var rejected []rejectedSpanOut
	for i, t := range list {
		tm, ok := t.(map[string]any)
		if !ok {
			return (&ingest.TypeError{Loc: []any{"traces", i}, Want: "an object"}).Field()
		}
		tid, terr := ingest.As[string](tm["trace_id"], "traces", i, "trace_id")
		if terr != nil {
			return terr.Field()
		}
		r, bad, err := ingest.NestedSpans(tm, tid, "traces", i)
		if err != nil {
			return err
		}
		for _, b := range bad {
			rejected = append(rejected, rejectedSpanOut{Index: b.Index, Detail: fmt.Sprintf("traces[%d]: %s", i, b.Msg)})
		}
		raws = append(raws, r...)
		for range r {
			traceOf = append(traceOf, i)
		}
	}
	res, err := h.Ingest.Ingest(c.Request().Context(), sc, raws, requestKey(c, body))
	if err != nil {
		return err
	}
	// A bad span costs only itself, and the caller learns which and why
	// (the compatible platform drops it silently).
	for _, b := range res.Rejected {
		at := -1
		if b.Index >= 0 && b.Index < len(traceOf) {
			at = traceOf[b.Index]
		}
		rejected = append(rejected, rejectedSpanOut{Index: b.Index, Detail: fmt.Sprintf("traces[%d]: %s", at, b.Msg)})
	}
	ids := []string{}
	seen := map[string]bool{}
	for _, l := range res.Links {
		if !seen[l.TraceID] {
			seen[l.TraceID] = true
			ids = append(ids, l.TraceID)
		}
	}
	out := map[string]any{"count": len(ids), "trace_ids": ids}
	if len(rejected) > 0 {
		out["rejected"] = rejected
	}
	return c.JSON(http.StatusAccepted, out)
}
