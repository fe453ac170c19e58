package app

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"
)

// Pprof serves net/http/pprof on addr (e.g. 127.0.0.1:6060) in the
// background, for profiling a running service; an empty addr does nothing.
// It is off by default: the profiles expose internals, so bind it to
// localhost only.
func Pprof(addr string, log *slog.Logger) {
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil {
			log.Warn("pprof listener", "addr", addr, "err", err)
		}
	}()
}
