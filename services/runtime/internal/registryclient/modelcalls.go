package registryclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// maxModelCall bounds what a lookup reads (one answer of at most 1 MiB, and
// its envelope).
const maxModelCall = 2 << 20

// modelCall is an answer as stored: what a caller of llm.Client reads back.
type modelCall struct {
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

// LookupModelCall implements callcache.Calls: key's answer in sc's
// project, from the model-call cache
// (docs/decisions/0008-model-call-cache-in-postgresql.md).
func (c *Client) LookupModelCall(ctx context.Context, sc scope.Scope, key string) (llm.Response, bool, error) {
	raw, ok, err := c.LookupEntry(ctx, sc, key)
	if err != nil || !ok {
		return llm.Response{}, false, err
	}
	var e modelCall
	if err := json.Unmarshal(raw, &e); err != nil {
		return llm.Response{}, false, fmt.Errorf("model-call cache entry %s: %w", key, err)
	}
	return llm.Response{Message: e.Message, Refusal: e.Refusal, FinishReason: e.FinishReason, Model: e.Model, Provider: e.Provider,
		Usage: llm.Usage{PromptTokens: e.Usage.Prompt, CompletionTokens: e.Usage.Completion, TotalTokens: e.Usage.Total}}, true, nil
}

// StoreModelCall implements callcache.Calls: res under key in sc's
// project, for ttl (at least a second).
func (c *Client) StoreModelCall(ctx context.Context, sc scope.Scope, key string, res llm.Response, ttl time.Duration) error {
	e := modelCall{Message: res.Message, Refusal: res.Refusal, FinishReason: res.FinishReason, Model: res.Model, Provider: res.Provider}
	e.Usage.Prompt, e.Usage.Completion, e.Usage.Total = res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.TotalTokens
	return c.StoreEntry(ctx, sc, key, e, ttl)
}

// LookupEntry reads key's entry in sc's project's model-call cache, as
// stored: a model answer, or a reused cell's (callcache.Cells); ok is
// false when there is none.
func (c *Client) LookupEntry(ctx context.Context, sc scope.Scope, key string) (json.RawMessage, bool, error) {
	var out struct {
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/model-calls/lookup", map[string]any{"keys": []string{key}}, &out, maxModelCall); err != nil {
		return nil, false, err
	}
	e, ok := out.Entries[key]
	return e, ok, nil
}

// lookupBatch is how many keys one LookupEntries request names: at most
// the registry's modelcalls.MaxKeys, and few enough that their entries
// (a cell's outputs each) stay far below maxRecords.
const lookupBatch = 500

// LookupEntries reads the entries of keys in sc's project's model-call
// cache, as LookupEntry does one, in requests of at most lookupBatch
// keys: a key without a live entry is absent from the map.
func (c *Client) LookupEntries(ctx context.Context, sc scope.Scope, keys []string) (map[string]json.RawMessage, error) {
	all := make(map[string]json.RawMessage, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), lookupBatch)
		var out struct {
			Entries map[string]json.RawMessage `json:"entries"`
		}
		if err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/model-calls/lookup", map[string]any{"keys": keys[:n]}, &out, maxRecords); err != nil {
			return nil, err
		}
		for k, v := range out.Entries {
			all[k] = v
		}
		keys = keys[n:]
	}
	return all, nil
}

// StoreEntry keeps entry under key in sc's project's model-call cache for
// ttl (at least a second).
func (c *Client) StoreEntry(ctx context.Context, sc scope.Scope, key string, entry any, ttl time.Duration) error {
	secs := max(int(ttl/time.Second), 1)
	return c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/model-calls/store",
		map[string]any{"entries": []any{map[string]any{"key": key, "response": entry, "ttl_seconds": secs}}}, nil, 1<<16)
}

// ReportWait implements callcache.Calls: run's cells wait on provider's
// rate limit until until (the run's progress shows it).
func (c *Client) ReportWait(ctx context.Context, sc scope.Scope, runID, provider string, until time.Time) error {
	return c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/runs/"+runID+"/waits",
		map[string]any{"provider": provider, "until": until.UTC().Format(time.RFC3339Nano)}, nil, 1<<12)
}
