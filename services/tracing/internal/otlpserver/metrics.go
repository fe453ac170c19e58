package otlpserver

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Metrics counts OTLP exports over both transports under the same names,
// told apart by the transport label (http, grpc), so that one dashboard
// panel or alert covers both:
//
//	otlp_export_requests_total{transport, result}
//	otlp_export_spans_total{transport, outcome="accepted"|"refused"}
//	otlp_export_duration_seconds{transport}
//
// result names the answer the same way for both transports (ok, invalid,
// unauthenticated, forbidden, throttled, unavailable, error): a 429 and a
// RESOURCE_EXHAUSTED are both "throttled". Spans are counted once the
// request is decoded: the spans of a request refused before that (a bad
// key, a full backlog at admission) are not known, only the request is.
type Metrics struct {
	requests *prometheus.CounterVec
	spans    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Transports, the values of the transport label.
const (
	TransportHTTP = "http"
	TransportGRPC = "grpc"
)

// NewMetrics registers the export metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "otlp_export_requests_total",
			Help: "OTLP trace export requests by transport and result (ok, invalid, unauthenticated, forbidden, throttled, unavailable, error)."},
			[]string{"transport", "result"}),
		spans: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "otlp_export_spans_total",
			Help: "Spans of decoded OTLP export requests by transport and outcome: accepted (stored) or refused (rejected alone, or with their request)."},
			[]string{"transport", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "otlp_export_duration_seconds",
			Help:    "Time to answer an OTLP trace export request, by transport.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
			[]string{"transport"}),
	}
	reg.MustRegister(m.requests, m.spans, m.duration)
	// Both transports and both outcomes are shown from the start, at 0:
	// a rate over a series that appears only with its first refusal
	// misses that refusal.
	for _, tr := range []string{TransportHTTP, TransportGRPC} {
		m.requests.WithLabelValues(tr, "ok")
		m.spans.WithLabelValues(tr, "accepted")
		m.spans.WithLabelValues(tr, "refused")
		m.duration.WithLabelValues(tr)
	}
	return m
}

// export is what the export handler learned of one request: how many
// spans it decoded and how many of those it rejected.
type export struct {
	decoded  bool
	spans    int
	rejected int
}

func (e *export) decode(n int) {
	if e != nil {
		e.decoded, e.spans = true, n
	}
}

func (e *export) reject(n int) {
	if e != nil {
		e.rejected = n
	}
}

func (m *Metrics) observe(transport, result string, e *export, start time.Time) {
	m.requests.WithLabelValues(transport, result).Inc()
	m.duration.WithLabelValues(transport).Observe(time.Since(start).Seconds())
	if !e.decoded {
		return
	}
	refused := e.rejected
	if result != "ok" {
		refused = e.spans // the request failed: none of its spans is stored
	}
	m.spans.WithLabelValues(transport, "accepted").Add(float64(e.spans - refused))
	m.spans.WithLabelValues(transport, "refused").Add(float64(refused))
}

const exportKey = "otlpserver.export"

// HTTPMiddleware counts the OTLP/HTTP export requests: POST on a route that
// ends in /v1/traces (/v1/traces on the OTLP port, /otlp/v1/traces and
// /public/otel/v1/traces on the API port). Use it before the admission
// gate, so that what the gate refuses is counted too.
func (m *Metrics) HTTPMiddleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().Method != http.MethodPost || !strings.HasSuffix(c.Path(), "/v1/traces") {
				return next(c)
			}
			start := time.Now()
			e := &export{}
			c.Set(exportKey, e)
			if err := next(c); err != nil {
				c.Error(err) // rendered here, so that its status is known
			}
			m.observe(TransportHTTP, httpResult(c.Response().Status), e, start)
			return nil
		}
	}
}

// httpExport is the record HTTPMiddleware put in c, nil without one.
func httpExport(c echo.Context) *export {
	e, _ := c.Get(exportKey).(*export)
	return e
}

func httpResult(code int) string {
	switch {
	case code < 300:
		return "ok"
	case code == http.StatusUnauthorized:
		return "unauthenticated"
	case code == http.StatusForbidden:
		return "forbidden"
	case code == http.StatusTooManyRequests:
		return "throttled"
	case code == http.StatusServiceUnavailable:
		return "unavailable"
	case code < 500:
		return "invalid"
	}
	return "error"
}

type exportCtxKey struct{}

// ServerOption counts the gRPC export calls; put it before the admission
// gate's options, so that what the gate refuses is counted too.
func (m *Metrics) ServerOption() grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		e := &export{}
		resp, err := handler(context.WithValue(ctx, exportCtxKey{}, e), req)
		m.observe(TransportGRPC, grpcResult(status.Code(err)), e, start)
		return resp, err
	})
}

func grpcExport(ctx context.Context) *export {
	e, _ := ctx.Value(exportCtxKey{}).(*export)
	return e
}

func grpcResult(code codes.Code) string {
	switch code {
	case codes.OK:
		return "ok"
	case codes.Unauthenticated:
		return "unauthenticated"
	case codes.PermissionDenied:
		return "forbidden"
	case codes.ResourceExhausted:
		return "throttled"
	case codes.Unavailable:
		return "unavailable"
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented:
		return "invalid"
	}
	return "error"
}
