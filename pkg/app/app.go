// Package app holds what every service's main does the same way: print its
// configuration table, load the configuration, run under a signal-aware
// context that drains in two steps, and turn an error into exit status 1.
package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/config"
)

// Lifecycle is what Main reads itself, under the service's prefix
// (<PREFIX>_SHUTDOWN_DELAY).
type Lifecycle struct {
	// A load balancer or Kubernetes' endpoints take a few seconds to stop
	// sending new connections after a pod is told to stop: closing the
	// listeners at once would refuse those connections. During the delay
	// /ready answers 503 and every listener keeps serving.
	ShutdownDelay time.Duration `split_words:"true" default:"5s" desc:"on SIGTERM, how long /ready answers 503 while every listener (API, OTLP, metrics) still serves, so load balancers stop sending new requests before the listeners close and in-flight requests drain; a second signal skips it; 0 closes at once"`
}

// Usage writes the Markdown rows of every variable a service reads: its own
// cfg and Main's Lifecycle.
func Usage(w io.Writer, prefix string, cfg any) error {
	if err := config.Usage(w, prefix, cfg); err != nil {
		return err
	}
	return config.Usage(w, prefix, &Lifecycle{})
}

// Main runs a service. `<binary> env` prints the Markdown table of its
// variables (docs/configuration.md is made from it) and exits.
// Otherwise cfg is loaded from PREFIX_* variables and run is called with a
// context that is cancelled on SIGINT or SIGTERM, after the shutdown delay
// (Draining is closed at the signal); run must drain and return.
func Main(service, prefix string, cfg any, run func(ctx context.Context) error) {
	if len(os.Args) > 1 && os.Args[1] == "env" {
		if err := Usage(os.Stdout, prefix, cfg); err != nil {
			slog.Error("print configuration", "err", err)
			os.Exit(1)
		}
		return
	}
	var lc Lifecycle
	for _, c := range []any{cfg, &lc} {
		if err := config.Load(prefix, c); err != nil {
			slog.Error(service+" configuration", "err", err)
			os.Exit(1)
		}
	}
	ctx, stop := notify(context.Background(), lc.ShutdownDelay, func() {
		// JSON like the services' own logs (pkg/logx), to standard error.
		slog.New(slog.NewJSONHandler(os.Stderr, nil)).Info("draining: not ready, still serving",
			"service", service, "delay", lc.ShutdownDelay.String())
	})
	err := run(ctx)
	stop()
	if err != nil {
		slog.Error(service+" exited", "err", err)
		os.Exit(1)
	}
}

type drainKey struct{}

// Draining returns a channel closed when the process has been told to stop
// and the shutdown delay has begun; ctx is cancelled when it ends. Servers
// answer /ready 503 from then on. It is nil (never closed) for a context
// not made by Main.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainKey{}).(chan struct{})
	return ch
}

// WithDraining returns a context whose Draining is ch: tests and embedders
// that run servers outside Main announce the drain by closing ch.
func WithDraining(ctx context.Context, ch chan struct{}) context.Context {
	return context.WithValue(ctx, drainKey{}, ch)
}

// notify returns a context cancelled delay after the first SIGINT or
// SIGTERM (at once on a second one); Draining(ctx) is closed at the first.
func notify(parent context.Context, delay time.Duration, onDrain func()) (context.Context, func()) {
	drain := make(chan struct{})
	ctx, cancel := context.WithCancel(WithDraining(parent, drain))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer cancel()
		select {
		case <-sigs:
		case <-done:
			return
		}
		close(drain)
		onDrain()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-sigs:
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
		cancel()
	}
}
