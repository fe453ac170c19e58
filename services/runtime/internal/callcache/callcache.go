// Package callcache is the runtime's side of the model-call cache and of
// the provider waits of evaluation runs, both kept by the registry in
// PostgreSQL (docs/decisions/0008-model-call-cache-in-postgresql.md) so
// every runtime replica shares them: Cache implements invoke.ModelCache,
// Waits reports that a run's cells wait on a provider's rate limit.
package callcache

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// maxAnswer bounds what a lookup reads (one answer of at most 1 MiB, and
// its envelope).
const maxAnswer = 2 << 20

// Cache is the registry's model-call cache of a project.
type Cache struct {
	Registry *svcclient.Client
	// TTL is how long a stored answer is served (RUNTIME_LLM_CACHE_TTL).
	TTL time.Duration
}

// entry is an answer as stored: what a caller of llm.Client reads back.
type entry struct {
	Message      prompt.Message `json:"message"`
	Refusal      string         `json:"refusal,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Model        string         `json:"model,omitempty"`
	Provider     string         `json:"provider,omitempty"`
	Usage        struct {
		Prompt     int64 `json:"prompt"`
		Completion int64 `json:"completion"`
		Total      int64 `json:"total"`
	} `json:"usage"`
}

// Lookup reads key's answer in sc's project.
func (c *Cache) Lookup(ctx context.Context, sc scope.Scope, key string) (llm.Response, bool, error) {
	status, answer, err := c.Registry.Post(ctx, sc, "/internal/evaluations/model-calls/lookup", map[string]any{"keys": []string{key}}, maxAnswer)
	if err != nil {
		return llm.Response{}, false, err
	}
	if status != http.StatusOK {
		return llm.Response{}, false, fmt.Errorf("callcache: lookup answered %d", status)
	}
	var out struct {
		Entries map[string]entry `json:"entries"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return llm.Response{}, false, fmt.Errorf("callcache: lookup: %w", err)
	}
	e, ok := out.Entries[key]
	if !ok {
		return llm.Response{}, false, nil
	}
	return llm.Response{Message: e.Message, Refusal: e.Refusal, FinishReason: e.FinishReason, Model: e.Model, Provider: e.Provider,
		Usage: llm.Usage{PromptTokens: e.Usage.Prompt, CompletionTokens: e.Usage.Completion, TotalTokens: e.Usage.Total}}, true, nil
}

// Store keeps res under key in sc's project for TTL.
func (c *Cache) Store(ctx context.Context, sc scope.Scope, key string, res llm.Response) error {
	e := entry{Message: res.Message, Refusal: res.Refusal, FinishReason: res.FinishReason, Model: res.Model, Provider: res.Provider}
	e.Usage.Prompt, e.Usage.Completion, e.Usage.Total = res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.TotalTokens
	ttl := max(int(c.TTL/time.Second), 1)
	status, _, err := c.Registry.Post(ctx, sc, "/internal/evaluations/model-calls/store",
		map[string]any{"entries": []any{map[string]any{"key": key, "response": e, "ttl_seconds": ttl}}}, 1<<16)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("callcache: store answered %d", status)
	}
	return nil
}

// Waits reports the provider waits of runs to the registry, at most once
// per Every per run and provider (a queue of cells would report each).
type Waits struct {
	Registry *svcclient.Client
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
		_, _, _ = w.Registry.Post(ctx, sc, "/internal/evaluations/runs/"+runID+"/waits",
			map[string]any{"provider": provider, "until": until.UTC().Format(time.RFC3339Nano)}, 1<<12)
	}()
}
