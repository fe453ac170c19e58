// Package app holds what every service's main does the same way: print its
// configuration table, load the configuration, run under a signal-aware
// context, and turn an error into exit status 1.
package app

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/assayhq/assay/pkg/config"
)

// Main runs a service. `<binary> env` prints the Markdown table of its
// variables (the README's configuration section is made from it) and exits.
// Otherwise cfg is loaded from PREFIX_* variables and run is called with a
// context that is cancelled on SIGINT or SIGTERM; run must drain and return.
func Main(service, prefix string, cfg any, run func(ctx context.Context) error) {
	if len(os.Args) > 1 && os.Args[1] == "env" {
		if err := config.Usage(os.Stdout, prefix, cfg); err != nil {
			slog.Error("print configuration", "err", err)
			os.Exit(1)
		}
		return
	}
	if err := config.Load(prefix, cfg); err != nil {
		slog.Error(service+" configuration", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		slog.Error(service+" exited", "err", err)
		os.Exit(1)
	}
}
