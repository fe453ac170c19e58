// Package registryclient is the runtime's typed client of the registry:
// it retrieves the application, evaluator or workflow revision an
// invocation names (by references, or deployed to an environment), with
// its embeds resolved, over the registry's internal HTTP API in the
// caller's scope, and reuses an answer for a short while: the lookup of a
// saved revision was most of an invocation's cost.
package registryclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// maxAnswer bounds a revision answer; a revision's data is bounded by the
// registry's own request limits, far below this.
const maxAnswer = 16 << 20

// maxCached bounds the cache; when full, it is emptied (entries live for a
// second or so, so this only matters under a flood of distinct lookups).
const maxCached = 10000

// Client calls one registry.
type Client struct {
	c   *svcclient.Client
	ttl time.Duration
	now func() time.Time

	flight singleflight.Group
	mu     sync.Mutex
	cache  map[string]cached
}

type cached struct {
	rev     *invoke.Revision
	expires time.Time
}

// New returns a client of the registry at base (its internal address). A
// found revision is reused for ttl by later lookups with the same project
// and references (0: never): a commit or a deployment reaches invocations
// by slug or environment at most ttl late; a lookup by revision id always
// names the same revision. Misses and refusals are not cached.
func New(base, token string, timeout, ttl time.Duration) *Client {
	return &Client{c: svcclient.New(base, token, timeout), ttl: ttl, now: time.Now, cache: map[string]cached{}}
}

// Revision implements invoke.Revisions: POST /api/<family>s/revisions/retrieve
// with the references as <key>_ref fields and resolve set unless the caller
// turned it off. No match is (nil, nil); a reference the registry refuses
// (400/422) is errs.Unprocessable with the registry's detail. Concurrent
// lookups of one key share one call.
func (c *Client) Revision(ctx context.Context, sc scope.Scope, q invoke.Lookup) (*invoke.Revision, error) {
	if c.ttl <= 0 {
		return c.retrieve(ctx, sc, q)
	}
	kb, _ := json.Marshal(q) // map keys are sorted: equal lookups, equal keys
	key := sc.ProjectID.String() + string(kb)
	c.mu.Lock()
	e, ok := c.cache[key]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.rev, nil
	}
	v, err, _ := c.flight.Do(key, func() (any, error) {
		rev, err := c.retrieve(ctx, sc, q)
		if err == nil && rev != nil {
			c.mu.Lock()
			if len(c.cache) >= maxCached {
				clear(c.cache)
			}
			c.cache[key] = cached{rev: rev, expires: c.now().Add(c.ttl)}
			c.mu.Unlock()
		}
		return rev, err
	})
	rev, _ := v.(*invoke.Revision)
	return rev, err
}

func (c *Client) retrieve(ctx context.Context, sc scope.Scope, q invoke.Lookup) (*invoke.Revision, error) {
	body := map[string]any{"resolve": q.Resolve}
	for k, r := range q.References {
		body[k+"_ref"] = r
	}
	if q.Key != "" {
		body["key"] = q.Key
	}
	status, answer, err := c.c.Post(ctx, sc, "/api/"+q.Family+"s/revisions/retrieve", body, maxAnswer)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, "runtime.registry_unavailable", err)
	}
	switch {
	case status == http.StatusOK:
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusNotFound:
		var e struct {
			Detail any `json:"detail"`
		}
		_ = json.Unmarshal(answer, &e)
		return nil, errs.WithDetail(errs.Unprocessable, "runtime.bad_reference",
			fmt.Sprintf("the registry refused the references: %v", e.Detail), e.Detail)
	default:
		return nil, errs.New(errs.Unavailable, "runtime.registry_unavailable", fmt.Sprintf("the registry answered %d", status))
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(answer, &all); err != nil {
		return nil, errs.Wrap(errs.Unavailable, "runtime.registry_answer", err)
	}
	raw, ok := all[q.Family+"_revision"]
	if !ok || string(raw) == "null" {
		return nil, nil // count 0: nothing matches in this project
	}
	var rev invoke.Revision
	if err := json.Unmarshal(raw, &rev); err != nil || rev.ID == "" {
		return nil, errs.New(errs.Unavailable, "runtime.registry_answer", "the registry's "+q.Family+"_revision is unreadable")
	}
	var info struct {
		References map[string]invoke.EntityRef `json:"references"`
	}
	_ = json.Unmarshal(all["retrieval_info"], &info)
	rev.Raw = raw
	rev.References = info.References
	return &rev, nil
}
