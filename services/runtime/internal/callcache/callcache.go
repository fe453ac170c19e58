// Package callcache is the runtime's side of the model-call cache and of
// the provider waits of evaluation runs, both kept by the registry in
// PostgreSQL (docs/decisions/0008-model-call-cache-in-postgresql.md) so
// every runtime replica shares them: Cache implements invoke.ModelCache,
// Waits reports that a run's cells wait on a provider's rate limit.
package callcache

import (
	"context"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// Cache is the registry's model-call cache of a project; it implements
// invoke.ModelCache.
type Cache struct {
	Registry Calls
	// TTL is how long a stored answer is served (RUNTIME_LLM_CACHE_TTL).
	TTL time.Duration
}

// Calls is the registry's model-call cache and provider-wait routes
// (registryclient.Client).
type Calls interface {
	// LookupModelCall reads key's answer in sc's project; ok is false
	// when there is none.
	LookupModelCall(ctx context.Context, sc scope.Scope, key string) (res llm.Response, ok bool, err error)
	// StoreModelCall keeps res under key in sc's project for ttl.
	StoreModelCall(ctx context.Context, sc scope.Scope, key string, res llm.Response, ttl time.Duration) error
	// ReportWait says run's cells wait on provider's rate limit until
	// until.
	ReportWait(ctx context.Context, sc scope.Scope, runID, provider string, until time.Time) error
}

// Lookup reads key's answer in sc's project.
func (c *Cache) Lookup(ctx context.Context, sc scope.Scope, key string) (llm.Response, bool, error) {
	return c.Registry.LookupModelCall(ctx, sc, key)
}

// Store keeps res under key in sc's project for TTL.
func (c *Cache) Store(ctx context.Context, sc scope.Scope, key string, res llm.Response) error {
	return c.Registry.StoreModelCall(ctx, sc, key, res, c.TTL)
}

// Waits reports the provider waits of runs to the registry, at most once
// per Every per run and provider (a queue of cells would report each).
type Waits struct {
	Registry Calls
	Every    time.Duration

	mu   sync.Mutex
	sent map[string]sent // by run|provider
}

type sent struct{ at, until time.Time }

// Report says run's cells wait on provider's rate limit until until. It
// never blocks the caller on the registry: the report is sent in the
// background, and a failed one is dropped (the next wait reports again).
func (w *Waits) Report(sc scope.Scope, runID, provider string, until time.Time) {
	every := w.Every
	if every <= 0 {
		every = time.Second
	}
	now := time.Now()
	// Shown for at least a moment: a wait of a few milliseconds would be
	// over before anyone reads the progress.
	if floor := now.Add(2 * every); until.Before(floor) {
		until = floor
	}
	k := runID + "|" + provider
	w.mu.Lock()
	if w.sent == nil {
		w.sent = map[string]sent{}
	}
	last, ok := w.sent[k]
	if ok && now.Sub(last.at) < every && until.Before(last.until.Add(every)) {
		w.mu.Unlock()
		return
	}
	w.sent[k] = sent{at: now, until: until}
	if len(w.sent) > 10000 {
		for k2, s := range w.sent {
			if now.Sub(s.at) > time.Minute {
				delete(w.sent, k2)
			}
		}
	}
	w.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.Registry.ReportWait(ctx, sc, runID, provider, until)
	}()
}
