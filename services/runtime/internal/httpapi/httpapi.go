// Package httpapi is the runtime's HTTP surface under /services: invoke,
// inspect and health per handler key, and the root invoke and inspect
// that dispatch by references or data.revision.data.uri. Handlers bind
// the envelope, pick the answer format from Accept, and render; the use
// case is package invoke.
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/services/runtime/internal/evaluators"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// Response headers of the compatible platform's services runtime.
const (
	headerVersion = "X-Ag-Version"
	headerTrace   = "X-Ag-Trace-Id"
	headerSpan    = "X-Ag-Span-Id"
	headerSession = "X-Ag-Session-Id"
)

// Handler serves the routes.
type Handler struct {
	Invoke *invoke.Service
}

// Register adds the /services routes to e.
func (h *Handler) Register(e *echo.Echo) {
	e.POST("/services/invoke", h.invoke)
	e.POST("/services/inspect", h.inspect)
	e.GET("/services/health", health)
	e.GET("/services/models", h.models)
	e.POST("/services/providers/test", h.testProvider)
	e.POST("/services/:key/:version/invoke", h.invoke)
	e.POST("/services/:key/:version/inspect", h.inspect)
	e.GET("/services/:key/:version/health", h.keyHealth)
}

var versionRE = regexp.MustCompile(`^v[0-9]+$`)

// routeKey returns the handler key of the path, or a 404 for a key or
// version the runtime does not serve.
func routeKey(c echo.Context) (string, error) {
	key, version := c.Param("key"), c.Param("version")
	if key == "" {
		return "", nil
	}
	if !served(key) || !versionRE.MatchString(version) {
		return "", errs.Message(errs.NotFound, "runtime.unknown_handler",
			fmt.Sprintf("no handler %s/%s on this runtime", key, version), map[string]any{"key": key, "version": version})
	}
	return key, nil
}

func served(key string) bool {
	for _, k := range invoke.Keys() {
		if k == key {
			return true
		}
	}
	return evaluators.Has(key)
}

func health(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Handler) keyHealth(c echo.Context) error {
	if _, err := routeKey(c); err != nil {
		return err
	}
	return health(c)
}

// format is how the answer is written.
type format int

const (
	batch format = iota
	ndjson
	sse
)

// negotiate reads Accept: JSON (or anything) is the batch answer, NDJSON
// and SSE stream; an Accept that allows none of these is 406.
func negotiate(accept string) (format, error) {
	if strings.TrimSpace(accept) == "" {
		return batch, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "*/*", "application/*":
			return batch, nil
		case "application/x-ndjson", "application/jsonl", "application/jsonlines":
			return ndjson, nil
		case "text/event-stream":
			return sse, nil
		}
	}
	return batch, errs.Message(errs.NotAcceptable, "runtime.not_acceptable",
		"the runtime answers application/json, application/x-ndjson or text/event-stream", map[string]any{"accept": accept})
}

// bind reads the envelope. The body's size is bounded by the server's
// body limit; its JSON by encoding/json's own nesting limit.
func bind(c echo.Context) (invoke.Request, error) {
	var req invoke.Request
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return req, err // the body limit's 413
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil // an empty body: the route's handler with no inputs
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return req, errs.Field("must be "+te.Type.String(), nil, append([]any{"body"}, pathOf(te.Field)...)...)
		}
		return req, errs.Message(errs.Invalid, "runtime.bad_json", "the body is not a JSON envelope: "+err.Error(), nil)
	}
	// After decoding, which proves the body JSON (the check's contract):
	// encoding/json has repaired bad text in req, not in the raw inputs.
	return req, inputlimits.CheckJSONText(body, nil, "body")
}

func pathOf(field string) []any {
	var out []any
	for _, p := range strings.Split(field, ".") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (h *Handler) call(c echo.Context) (invoke.Call, format, error) {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return invoke.Call{}, batch, err
	}
	key, err := routeKey(c)
	if err != nil {
		return invoke.Call{}, batch, err
	}
	f, err := negotiate(c.Request().Header.Get(echo.HeaderAccept))
	if err != nil {
		return invoke.Call{}, batch, err
	}
	req, err := bind(c)
	if err != nil {
		return invoke.Call{}, batch, err
	}
	call := invoke.Call{Scope: sc, Key: key, Req: req, Parent: traceParent(c.Request().Header)}
	if id := c.Request().Header.Get(headerSession); id != "" && call.Req.SessionID == "" {
		call.Req.SessionID = id
	}
	return call, f, nil
}

func (h *Handler) invoke(c echo.Context) error {
	call, f, err := h.call(c)
	if err != nil {
		return err
	}
	if f == batch {
		out := h.Invoke.Invoke(c.Request().Context(), call)
		if out.Err != nil {
			c.Set("error", out.Err) // for the access log
		}
		setHeaders(c, out.Response)
		return c.JSON(out.Response.Status.Code, body(out.Response))
	}
	return h.stream(c, call, f)
}

// stream answers with one event per token and a last event carrying the
// whole envelope. Until the first token the answer is not started, so a
// refusal (406 for a handler that cannot stream, 4xx for bad input) is an
// ordinary JSON error answer.
func (h *Handler) stream(c echo.Context, call invoke.Call, f format) error {
	w := c.Response()
	started := false
	write := func(event map[string]any) error {
		if !started {
			ct := "application/x-ndjson"
			if f == sse {
				ct = "text/event-stream"
				w.Header().Set("Cache-Control", "no-cache")
			}
			w.Header().Set(echo.HeaderContentType, ct)
			w.WriteHeader(http.StatusOK)
			started = true
		}
		b, _ := json.Marshal(event)
		if f == sse {
			fmt.Fprintf(w, "data: %s\n\n", b)
		} else {
			w.Write(append(b, '\n'))
		}
		w.Flush()
		return nil
	}
	call.Stream = func(delta string) error {
		return write(map[string]any{"type": "delta", "data": map[string]any{"delta": delta}})
	}
	out := h.Invoke.Invoke(c.Request().Context(), call)
	if !started {
		setHeaders(c, out.Response)
		if out.Response.Status.Code != http.StatusOK {
			return c.JSON(out.Response.Status.Code, body(out.Response))
		}
	}
	final := map[string]any{"type": "done"}
	if out.Response.Status.Code != http.StatusOK {
		final["type"] = "error"
	}
	b, _ := json.Marshal(out.Response)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k, v := range m {
		final[k] = v
	}
	return write(final)
}

// models lists the providers and models the project's calls reach.
func (h *Handler) models(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	out, err := h.Invoke.Providers(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// testProvider makes one cheap call to a provider: 200 with ok true, or ok
// false and the provider's error; never the key.
func (h *Handler) testProvider(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	var req invoke.ProviderTest
	if err := json.NewDecoder(io.LimitReader(c.Request().Body, 1<<16)).Decode(&req); err != nil {
		return errs.Message(errs.Invalid, "runtime.bad_json", "the body is not {\"provider\": <secret slug or provider family>}: "+err.Error(), nil)
	}
	out, err := h.Invoke.TestProvider(c.Request().Context(), sc, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) inspect(c echo.Context) error {
	call, _, err := h.call(c)
	if err != nil {
		return err
	}
	res, err := h.Invoke.Inspect(c.Request().Context(), call)
	if err != nil {
		return err
	}
	c.Response().Header().Set(headerVersion, invoke.Version)
	return c.JSON(http.StatusOK, res)
}

// body is what an answer carries: a failure is the compatible platform's
// {status, trace_id, span_id}, the version and session staying in the
// headers.
func body(r invoke.Response) invoke.Response {
	if r.Status.Code != http.StatusOK {
		r.Version, r.SessionID = "", ""
	}
	return r
}

func setHeaders(c echo.Context, r invoke.Response) {
	hd := c.Response().Header()
	hd.Set(headerVersion, invoke.Version)
	if r.TraceID != "" {
		hd.Set(headerTrace, r.TraceID)
		hd.Set(headerSpan, r.SpanID)
		hd.Set("Traceparent", "00-"+r.TraceID+"-"+r.SpanID+"-01")
	}
	if r.SessionID != "" {
		hd.Set(headerSession, r.SessionID)
		hd.Set("Baggage", "ag.session.id="+r.SessionID)
	}
}

var traceParentRE = regexp.MustCompile(`^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$`)

// traceParent reads the caller's W3C trace context, or x-ag-trace-id and
// x-ag-span-id; an invalid or all-zero one is ignored.
func traceParent(h http.Header) invoke.Link {
	if m := traceParentRE.FindStringSubmatch(strings.TrimSpace(h.Get("Traceparent"))); m != nil &&
		strings.Trim(m[1], "0") != "" && strings.Trim(m[2], "0") != "" {
		return invoke.Link{TraceID: m[1], SpanID: m[2]}
	}
	t, s := strings.ToLower(h.Get(headerTrace)), strings.ToLower(h.Get(headerSpan))
	if len(t) == 32 && isHex(t) && strings.Trim(t, "0") != "" {
		l := invoke.Link{TraceID: t}
		if len(s) == 16 && isHex(s) && strings.Trim(s, "0") != "" {
			l.SpanID = s
		}
		return l
	}
	return invoke.Link{}
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
