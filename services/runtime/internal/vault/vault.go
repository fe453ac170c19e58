// Package vault keeps a project's provider keys and custom providers, read
// from the registry's vault (registryclient), per project for a short
// while, so an invocation costs no registry round trip while a key change
// still shows within seconds. The cache is a use case's: Forget empties a
// project's after a provider refused its key.
package vault

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// DefaultTTL is how long a project's secrets are kept when New gets none.
const DefaultTTL = 30 * time.Second

const (
	// requestTimeout bounds one read of the vault, which outlives the
	// caller that started it (the others wait on it).
	requestTimeout = 10 * time.Second
	// maxProjects bounds the cache; past it expired entries are swept,
	// then arbitrary ones dropped (a dropped project is just read again).
	maxProjects = 10000
)

// Source reads a project's vault, decrypted: registryclient.Client.Secrets.
// Its errors are what Secrets returns (errs.Unavailable when the registry
// is down).
type Source interface {
	Secrets(ctx context.Context, sc scope.Scope) (llm.Secrets, error)
}

// Client reads and caches vaults. Safe for concurrent use.
type Client struct {
	src   Source
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group

	mu    sync.RWMutex // read-locked on the hot path, a cache hit
	cache map[uuid.UUID]entry
	gen   uint64 // bumped by Forget, so a read begun before it is not cached
}

type entry struct {
	s       llm.Secrets
	expires time.Time
}

// New returns a client that reads vaults from src and keeps each
// project's secrets for ttl (DefaultTTL when ttl <= 0).
func New(src Source, ttl time.Duration) *Client {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Client{src: src, ttl: ttl, now: time.Now, cache: map[uuid.UUID]entry{}}
}

// Secrets returns the project's vault, decrypted: from the cache when read
// less than ttl ago, else from the registry (concurrent misses of one
// project share one read). The result is shared: callers must not modify
// it. A registry that does not answer, or answers 502-504, is
// errs.Unavailable; any other failure errs.Internal.
func (c *Client) Secrets(ctx context.Context, sc scope.Scope) (llm.Secrets, error) {
	p := sc.ProjectID
	c.mu.RLock()
	e, ok := c.cache[p]
	gen := c.gen
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return e.s, nil
	}
	ch := c.group.DoChan(p.String(), func() (any, error) {
		// The read outlives one caller's cancellation: the others wait on it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		defer cancel()
		s, err := c.src.Secrets(fctx, sc)
		if err != nil {
			return llm.Secrets{}, err
		}
		c.store(p, s, gen)
		return s, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return llm.Secrets{}, r.Err
		}
		return r.Val.(llm.Secrets), nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return llm.Secrets{}, errs.Wrap(errs.Timeout, "runtime.vault_timeout", ctx.Err())
		}
		return llm.Secrets{}, ctx.Err()
	}
}

// Forget drops the project's cached secrets, so the next Secrets reads the
// registry again: for after a provider refused a key as invalid (it may
// have been replaced meanwhile).
func (c *Client) Forget(project uuid.UUID) {
	c.mu.Lock()
	delete(c.cache, project)
	c.gen++
	c.mu.Unlock()
}

func (c *Client) store(p uuid.UUID, s llm.Secrets, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen { // a Forget came while reading: this read may be stale
		return
	}
	now := c.now()
	if len(c.cache) >= maxProjects {
		for k, e := range c.cache {
			if !now.Before(e.expires) {
				delete(c.cache, k)
			}
		}
		for k := range c.cache {
			if len(c.cache) < maxProjects {
				break
			}
			delete(c.cache, k)
		}
	}
	c.cache[p] = entry{s: s, expires: now.Add(c.ttl)}
}
