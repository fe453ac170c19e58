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

	"github.com/assayhq/assay/pkg/roles"
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

// ProjectRoleSQL is the SQL expression of a user's effective role in the
// project aliased p (a row of projects): the organization's owner is owner
// everywhere in it; otherwise the project membership's role, else the
// workspace's, else the organization's; ” when the user has none. user is
// the SQL expression of the user's id. The gateway's accounts store and the
// verifier both resolve roles with it, so they cannot disagree.
func ProjectRoleSQL(user string) string {
	return `COALESCE(
		(SELECT 'owner' FROM organizations o WHERE o.id = p.organization_id AND o.owner_user_id = ` + user + `),
		(SELECT role FROM project_memberships WHERE project_id = p.id AND user_id = ` + user + `),
		(SELECT role FROM workspace_memberships WHERE workspace_id = p.workspace_id AND user_id = ` + user + `),
		(SELECT role FROM organization_memberships WHERE organization_id = p.organization_id AND user_id = ` + user + `),
		'')`
}

// FlushAll is the payload on Channel that drops every cached key: a
// membership, role or ownership changed, which may change any key's role.
const FlushAll = "*"

// ErrInvalid means the key is malformed, unknown, revoked or expired, or its
// creator no longer has a role in the key's project.
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

// Verify returns the scope of a raw key, or ErrInvalid: its project, its
// creator, and its role: the key's own role (its creator's when it has
// none) capped by the creator's current role in the project. A key whose
// creator was deleted (created_by_id unset) keeps its own role, viewer when
// it has none: it can read what it could, never more.
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
	var (
		user        *uuid.UUID
		keyRole     *string
		creatorRole string
	)
	err := v.pool.QueryRow(ctx, `
		SELECT k.secret_hash, k.id, k.project_id, k.created_by_id, k.expires_at, k.role, `+ProjectRoleSQL("k.created_by_id")+`
		FROM api_keys k JOIN projects p ON p.id = k.project_id
		WHERE k.prefix = $1 AND k.revoked_at IS NULL`, prefix,
	).Scan(&e.hash, &e.scope.KeyID, &e.scope.ProjectID, &user, &e.expires, &keyRole, &creatorRole)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return entry{}, fmt.Errorf("look up api key: %w", err)
	}
	if e.hash != "" {
		if r, ok := keyScopeRole(user, keyRole, roles.Role(creatorRole)); ok {
			e.scope.Role = string(r)
			if keyRole != nil {
				e.scope.KeyRole = *keyRole
			}
		} else {
			e = entry{until: e.until} // the creator lost access: as unknown
		}
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

// keyScopeRole is a key's effective role; ok is false when its creator has
// no role in the project any more.
func keyScopeRole(creator *uuid.UUID, keyRole *string, creatorRole roles.Role) (roles.Role, bool) {
	own := roles.Viewer
	if keyRole != nil && roles.Role(*keyRole).Valid() {
		own = roles.Role(*keyRole)
	} else if creator != nil {
		own = creatorRole
	}
	if creator == nil {
		return own, true
	}
	if !creatorRole.Valid() {
		return "", false
	}
	return roles.Min(own, creatorRole), true
}

// Forget drops a prefix from the cache.
// FlushAll drops every entry (a membership or role changed here: this
// replica must not wait for its own NOTIFY).
func (v *Verifier) Forget(prefix string) {
	if prefix == FlushAll {
		v.forgetAll()
		return
	}
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
		if n.Payload == FlushAll {
			v.forgetAll()
			continue
		}
		v.Forget(n.Payload)
	}
}
