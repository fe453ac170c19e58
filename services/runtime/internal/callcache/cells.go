package callcache

import (
	"context"
	"encoding/json"
	"time"

	"github.com/assayhq/assay/pkg/scope"
)

// Cells is the cell cache of evaluation runs (evalrun.CellCache), kept in
// the registry's model-call cache beside the model answers: an entry is
// JSON under a SHA-256 key, per project, with a time to live, which is
// what that table stores; a cell key hashes a tag of its own
// ("evaluation-cell/1", evalrun.cellKey), so it never equals a model
// call's (docs/decisions/0011-cell-reuse.md).
type Cells struct {
	Registry Entries
	// TTL is how long a cell is reused (RUNTIME_LLM_CACHE_TTL, as the
	// model answers it holds).
	TTL time.Duration
}

// Entries is the registry's model-call cache read and written as raw
// entries (registryclient.Client).
type Entries interface {
	LookupEntries(ctx context.Context, sc scope.Scope, keys []string) (map[string]json.RawMessage, error)
	StoreEntry(ctx context.Context, sc scope.Scope, key string, entry any, ttl time.Duration) error
}

// LookupCells reads the entries of keys in sc's project.
func (c *Cells) LookupCells(ctx context.Context, sc scope.Scope, keys []string) (map[string]json.RawMessage, error) {
	return c.Registry.LookupEntries(ctx, sc, keys)
}

// StoreCell keeps entry under key in sc's project for TTL.
func (c *Cells) StoreCell(ctx context.Context, sc scope.Scope, key string, entry json.RawMessage) error {
	return c.Registry.StoreEntry(ctx, sc, key, entry, c.TTL)
}
