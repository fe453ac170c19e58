package invoke

import (
	"context"
	"time"

	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// coalesce makes identical cacheable model calls in flight at once in
// this process (same project and cache key: two cells of a run asking
// the same question) one call: the first runs call, the others wait for
// its answer and record it as answered from the cache, which it is about
// to be. Without it both miss the cache and both call the model
// (docs/decisions/0008-model-call-cache-in-postgresql.md); replicas still
// may, which only a lock across them would prevent. A waiter whose
// leader failed (its own cell stopped, a provider error) calls for
// itself, so no cell inherits another's failure.
func (r *run) coalesce(ctx context.Context, kind string, t prompt.Template, msgs []prompt.Message, start time.Time, key string, call func() (llm.Response, error)) (llm.Response, error) {
	led := false // set only by this caller's own fn, which Do runs in this goroutine
	v, err, _ := r.s.flight.Do(r.call.Scope.ProjectID.String()+"/"+key, func() (any, error) {
		led = true
		return call()
	})
	if led {
		res, _ := v.(llm.Response)
		return res, err
	}
	if err != nil {
		if ctx.Err() != nil {
			return llm.Response{}, ctx.Err()
		}
		return call()
	}
	res := v.(llm.Response)
	saved, _ := r.s.Prices.CallCost(res.Provider, res.Model, float64(res.Usage.PromptTokens), float64(res.Usage.CompletionTokens), start)
	r.calls.Cached++
	r.calls.CostSaved += saved
	r.children = append(r.children, cachedSpan(modelSpan(kind, t.LLMConfig, msgs, res, start, time.Now(), nil), key, saved))
	return res, nil
}
