// Package logx builds the JSON slog logger every service uses and carries
// request-scoped attributes (request_id, project_id) through a context.
package logx

import (
	"context"
	"io"
	"log/slog"
	"os"
)

// Config selects the minimum level. Variables: <PREFIX>_LOG_LEVEL.
type Config struct {
	Level slog.Level `default:"info" desc:"minimum log level: debug, info, warn or error"`
}

// New returns a JSON logger writing to stderr.
func New(cfg Config) *slog.Logger { return NewTo(os.Stderr, cfg) }

// NewTo returns a JSON logger writing to w; tests use it to read logs back.
func NewTo(w io.Writer, cfg Config) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.Level})
	return slog.New(ctxHandler{h})
}

type ctxKey struct{}

// With returns ctx carrying extra attributes that every ...Context log call
// made with it will include.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, ctxKey{}, all)
}

// ctxHandler adds the attributes stored by With to each record.
type ctxHandler struct{ slog.Handler }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(ctxKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h ctxHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(attrs)}
}

func (h ctxHandler) WithGroup(name string) slog.Handler {
	return ctxHandler{h.Handler.WithGroup(name)}
}
