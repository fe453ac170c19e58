package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
)

// Upstreams are the base URLs of the services behind the gateway.
type Upstreams struct {
	Registry string
	Runtime  string
	Tracing  string
	// Console serves the web console's pages under /console/; empty
	// leaves /console/ a 404 (a gateway without a console).
	Console string
	// The token of the gateway's pair with each service, sent with the
	// caller's scope; the console gets none.
	RegistryToken, RuntimeToken, TracingToken string
}

// owners maps the first API path segment (or "simple/<x>") to the service
// that owns it. Anything not listed is a 404 at the gateway: notably
// "internal", under which services serve each other (the registry hands
// the runtime decrypted provider keys there).
var owners = map[string]string{
	"testsets": "registry", "testcases": "registry", "workflows": "registry",
	"applications": "registry", "evaluators": "registry", "environments": "registry",
	"queries": "registry", "evaluations": "registry", "folders": "registry", "variants": "registry", // variants: the compatible SDK's legacy configuration fetch
	"simple/testsets": "registry", "simple/workflows": "registry", "simple/applications": "registry",
	"simple/evaluators": "registry", "simple/environments": "registry", "simple/queries": "registry",
	"simple/evaluations": "registry", "simple/queues": "registry",
	"secrets": "registry", // the project vault; its /internal read is never routed

	"otlp": "tracing", "tracing": "tracing", "traces": "tracing", "spans": "tracing",
	"public":      "tracing", // Langfuse's public API: its OTLP endpoint (tracing's langfuse routes)
	"annotations": "tracing", "invocations": "tracing",
	"simple/traces": "tracing", "simple/spans": "tracing",

	"services": "runtime",
}

// proxy forwards API requests to the owning service with the caller's scope
// in the internal headers.
type proxy struct {
	targets map[string]*httputil.ReverseProxy
}

func newProxy(up Upstreams, timeout time.Duration, log *slog.Logger) (*proxy, error) {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	p := &proxy{targets: map[string]*httputil.ReverseProxy{}}
	tokens := map[string]string{"registry": up.RegistryToken, "runtime": up.RuntimeToken, "tracing": up.TracingToken}
	for name, raw := range map[string]string{"registry": up.Registry, "runtime": up.Runtime, "tracing": up.Tracing, "console": up.Console} {
		token := tokens[name]
		if raw == "" && name == "console" {
			continue
		}
		target, err := url.Parse(raw)
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, "gateway.bad_upstream", err)
		}
		p.targets[name] = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				path := pr.Out.URL.Path
				pr.SetURL(target)
				pr.Out.URL.Path, pr.Out.URL.RawPath = path, ""
				pr.SetXForwarded()
				if name == "console" { // static pages: no credentials, no scope
					pr.Out.Header.Del(echo.HeaderAuthorization)
					pr.Out.Header.Del("Cookie")
					scope.Strip(pr.Out.Header)
					return
				}
				// The client's credentials stop here; the service trusts the
				// internal headers, which the client cannot forge.
				pr.Out.Header.Del(echo.HeaderAuthorization)
				pr.Out.Header.Del("Cookie") // the console's session token
				scope.Strip(pr.Out.Header)
				s, _ := scope.From(pr.In.Context())
				scope.Set(pr.Out.Header, token, s)
			},
			// The gateway's requestID middleware has already put the id on
			// the response, and the service echoes the same id (the
			// gateway passed it on): the proxy would add it a second time.
			ModifyResponse: func(res *http.Response) error {
				res.Header.Del(httpx.HeaderRequestID)
				// The gateway sets nosniff on every answer itself (httpx),
				// whatever the service behind sent.
				res.Header.Del("X-Content-Type-Options")
				return nil
			},
			Transport:     transport,
			FlushInterval: -1, // stream responses (SSE, chunked) as they come
			ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			// The error goes back to handle, which returns it to the one
			// error renderer: the gateway's own 413 on a body over its
			// limit (found only while streaming a chunked body) stays a
			// 413, and only a failing upstream is a 503 or 504.
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				holder, _ := r.Context().Value(proxyErrKey{}).(*error)
				if holder == nil { // not called through handle; cannot happen
					w.WriteHeader(http.StatusBadGateway)
					return
				}
				switch {
				case errs.KindOf(err) != errs.Internal:
					*holder = err // ours, e.g. the body limit's 413
				case errors.Is(err, context.Canceled):
					*holder = errClientGone
				case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
					e := errs.Message(errs.Timeout, "gateway.upstream_timeout", name+" did not answer in time", nil)
					e.Err = err // logged by the renderer
					*holder = e
				default:
					e := errs.Message(errs.Unavailable, "gateway.upstream_unavailable", name+" is unavailable", nil)
					e.Err = err
					*holder = e
				}
			},
		}
	}
	return p, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// route returns the owning service and the path to forward for a canonical path.
func route(path string) (service, forward string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if segs[0] == "preview" { // the compatible platform mounts every router at /preview/X too
		segs = segs[1:]
	}
	if len(segs) == 0 || segs[0] == "" {
		return "", "", false
	}
	key := segs[0]
	if key == "simple" && len(segs) > 1 {
		key += "/" + segs[1]
	}
	service, ok = owners[key]
	if !ok {
		return "", "", false
	}
	rest := "/" + strings.Join(segs, "/")
	if service == "runtime" {
		return service, rest, true
	}
	return service, "/api" + rest, true
}

// proxyErrKey carries, in the request context, where the reverse proxy's
// error handler leaves the error of a failed forward.
type proxyErrKey struct{}

// errClientGone ends a request whose client went away; nobody reads the
// answer, so none is written.
var errClientGone = errors.New("client went away")

func (p *proxy) handle(c echo.Context) error {
	path := c.Request().URL.Path
	if m := c.Request().Method; path == "/" && (m == http.MethodGet || m == http.MethodHead) {
		return c.Redirect(http.StatusFound, "/console/")
	}
	service, forward, ok := route(path)
	if isConsolePath(path) && p.targets["console"] != nil {
		service, forward, ok = "console", path, true
	}
	if !ok {
		return errs.New(errs.NotFound, "gateway.no_route", "Not Found")
	}
	var failed error
	r := c.Request().WithContext(context.WithValue(c.Request().Context(), proxyErrKey{}, &failed))
	r.URL.Path, r.URL.RawPath = forward, ""
	p.targets[service].ServeHTTP(c.Response(), r)
	if errors.Is(failed, errClientGone) {
		return nil
	}
	return failed
}
