// Package scope carries the caller's project and user from the gateway to the
// services: in internal HTTP headers on the wire, in the context inside a
// process. The headers are trusted only together with the internal token.
package scope

import (
	"context"
	"crypto/subtle"
	"net/http"

	"github.com/google/uuid"
)

// Internal headers set by the gateway. The gateway strips them from every
// incoming request, so a client can never forge them.
const (
	HeaderToken   = "X-Assay-Internal-Token"
	HeaderProject = "X-Assay-Project-Id"
	HeaderUser    = "X-Assay-User-Id"
	HeaderRole    = "X-Assay-Role"
)

// Scope is who is calling and on which project.
type Scope struct {
	ProjectID uuid.UUID
	UserID    uuid.UUID
	// Role is the caller's role in the project (roles.Role as a string;
	// for a key, capped by its owner's role). Empty for internal callers,
	// which act with the platform's own rights.
	Role string
	// KeyRole is the API key's own role, "" when it follows its creator's:
	// what caps the key on targets outside its project (the team routes).
	// Not sent to the services.
	KeyRole string
	// KeyID is the API key the caller authenticated with, for the gateway's
	// audit log; it never leaves the process (Set does not send it).
	KeyID uuid.UUID
}

type ctxKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// From returns the scope in ctx and whether there is one.
func From(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(ctxKey{}).(Scope)
	return s, ok
}

// Set writes the internal headers for s onto h, replacing any present.
func Set(h http.Header, token string, s Scope) {
	h.Set(HeaderToken, token)
	h.Set(HeaderProject, s.ProjectID.String())
	if s.UserID != uuid.Nil {
		h.Set(HeaderUser, s.UserID.String())
	} else {
		h.Del(HeaderUser)
	}
	if s.Role != "" {
		h.Set(HeaderRole, s.Role)
	} else {
		h.Del(HeaderRole)
	}
}

// Strip removes every internal header from h.
func Strip(h http.Header) {
	h.Del(HeaderToken)
	h.Del(HeaderProject)
	h.Del(HeaderUser)
	h.Del(HeaderRole)
}

// Parse checks the internal token in h against token (in constant time) and
// returns the scope the headers carry. ok is false when the token is missing
// or wrong or a header is not a UUID.
func Parse(h http.Header, token string) (s Scope, ok bool) {
	got := h.Get(HeaderToken)
	if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		return Scope{}, false
	}
	return parseHeaders(h)
}

// ParseFrom is Parse for a service that several others call, each with the
// token of its own pair: tokens maps a caller's name to that token. It
// returns which caller the token belongs to, so a token meant for another
// pair (or another callee) is refused, and every token is compared, so the
// time taken does not tell which one came close.
func ParseFrom(h http.Header, tokens map[string]string) (s Scope, caller string, ok bool) {
	got := []byte(h.Get(HeaderToken))
	for name, token := range tokens {
		if token != "" && subtle.ConstantTimeCompare(got, []byte(token)) == 1 {
			caller = name
		}
	}
	if caller == "" {
		return Scope{}, "", false
	}
	if s, ok = parseHeaders(h); !ok {
		return Scope{}, "", false
	}
	return s, caller, true
}

// WithCaller returns ctx carrying the name of the service that called.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom is the name of the service whose token the request carried,
// "" outside an internal request.
func CallerFrom(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

type callerKey struct{}

func parseHeaders(h http.Header) (s Scope, ok bool) {
	var err error
	if p := h.Get(HeaderProject); p != "" {
		if s.ProjectID, err = uuid.Parse(p); err != nil {
			return Scope{}, false
		}
	}
	if u := h.Get(HeaderUser); u != "" {
		if s.UserID, err = uuid.Parse(u); err != nil {
			return Scope{}, false
		}
	}
	s.Role = h.Get(HeaderRole)
	return s, true
}
