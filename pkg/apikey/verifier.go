package apikey

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/scope"
)

// Channel is the NOTIFY channel a trigger on api_keys signals with the
// prefix of every inserted, updated or deleted key.
const Channel = "assay_api_keys"

// Config tunes the verifier cache. Variables: <PREFIX>_APIKEY_*.
type Config struct {
	CacheTTL     time.Duration `split_words:"true" default:"30s" desc:"how long a key lookup is cached; changes are also pushed through NOTIFY, so this only bounds staleness when the listener is down"`
	CacheEntries int           `split_words:"true" default:"100000" desc:"largest number of cached key lookups"`
}

// ErrInvalid means the key is malformed, unknown, revoked or expired.
var ErrInvalid = errors.New("invalid api key")

type entry struct {
	hash    string // empty: the prefix is unknown (negative entry)
	scope   scope.Scope
	expires *time.Time
	until   time.Time
}

// Verifier checks keys against the api_keys table through a cache.
type Verifier struct {
	pool *pgxpool.Pool
	cfg  Config
	log  *slog.Logger
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]entry
	gen   uint64 // bumped by every invalidation; a lookup that raced one is not cached
}

// NewVerifier returns a verifier; call Run to receive invalidations.
func NewVerifier(pool *pgxpool.Pool, cfg Config, log *slog.Logger) *Verifier {
	return &Verifier{pool: pool, cfg: cfg, log: log, now: time.Now, cache: map[string]entry{}}
}

// Verify returns the scope (project, creator) of a raw key, or ErrInvalid.
func (v *Verifier) Verify(ctx context.Context, raw string) (scope.Scope, error) {
	k, ok := Parse(raw)
	if !ok {
		return scope.Scope{}, ErrInvalid
	}
	e, err := v.lookup(ctx, k.Prefix)
	if err != nil {
		return scope.Scope{}, err
	}
	if e.hash == "" || subtle.ConstantTimeCompare([]byte(e.hash), []byte(k.Hash())) != 1 {
		return scope.Scope{}, ErrInvalid
	}
	if e.expires != nil && !v.now().Before(*e.expires) {
		return scope.Scope{}, ErrInvalid
	}
	return e.scope, nil
}

func (v *Verifier) lookup(ctx context.Context, prefix string) (entry, error) {
	now := v.now()
	v.mu.Lock()
	e, ok := v.cache[prefix]
	gen := v.gen
	v.mu.Unlock()
	if ok && now.Before(e.until) {
		return e, nil
	}
	e = entry{until: now.Add(v.cfg.CacheTTL)}
	var user *uuid.UUID
	err := v.pool.QueryRow(ctx, `
		SELECT secret_hash, project_id, created_by_id, expires_at
		FROM api_keys WHERE prefix = $1 AND revoked_at IS NULL`, prefix,
	).Scan(&e.hash, &e.scope.ProjectID, &user, &e.expires)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return entry{}, fmt.Errorf("look up api key: %w", err)
	}
	if user != nil {
		e.scope.UserID = *user
	}
	v.mu.Lock()
	if gen == v.gen {
		if len(v.cache) >= v.cfg.CacheEntries {
			clear(v.cache) // crude but bounded; a full cache is refilled from the index
		}
		v.cache[prefix] = e
	}
	v.mu.Unlock()
	return e, nil
}

// Forget drops a prefix from the cache.
func (v *Verifier) Forget(prefix string) {
	v.mu.Lock()
	delete(v.cache, prefix)
	v.gen++
	v.mu.Unlock()
}

func (v *Verifier) forgetAll() {
	v.mu.Lock()
	clear(v.cache)
	v.gen++
	v.mu.Unlock()
}

// Run listens for key changes until ctx is done. While the listener is down
// nothing is cached beyond CacheTTL; after each reconnect the cache is
// flushed, since notifications may have been missed.
func (v *Verifier) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := v.listen(ctx)
		if ctx.Err() != nil {
			break
		}
		v.log.Warn("api key listener stopped, retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func (v *Verifier) listen(ctx context.Context) error {
	conn, err := v.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire listener connection: %w", err)
	}
	// The connection ends LISTENing when it is destroyed, not when released.
	defer func() { conn.Conn().Close(context.Background()); conn.Release() }()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	v.forgetAll()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		v.Forget(n.Payload)
	}
}
