// Package registryclient is every call the runtime makes to the registry,
// over its internal HTTP API with the token of the runtime's pair with the
// registry and the caller's scope: the application, evaluator or workflow
// revision an invocation names (by references, or deployed to an
// environment, with its embeds resolved); the project's vault; the
// model-call cache and provider waits (callcache); and the evaluation
// worker's records (runs, scenarios, results, metrics, the internal claim,
// renew, settle, fail, cancel and fan-out routes, the pinned testset and
// query revisions). Every answer is mapped to an error by svcclient.Check;
// what an invocation answers for a revision or vault failure (an errs.Kind)
// is decided here from that.
//
// One cache lives here, the revisions' (Revision): the lookup of a saved
// revision was most of an invocation's cost, and reusing an answer for a
// second is transport-level, with no rule of any use case in it. The
// vault's cache, which a use case empties when a provider refuses a key,
// is package vault's.
package registryclient

import (
	"context"
	"encoding/json"
	"errors"
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
	path := "/api/" + q.Family + "s/revisions/retrieve"
	status, answer, err := c.c.Post(ctx, sc, path, body, maxAnswer)
	var se *svcclient.StatusError
	switch err := svcclient.Check(http.MethodPost+" "+path, status, answer, err); {
	case err == nil:
	case errors.As(err, &se) && (se.Status == http.StatusBadRequest || se.Status == http.StatusUnprocessableEntity || se.Status == http.StatusNotFound):
		var e struct {
			Detail any `json:"detail"`
		}
		_ = json.Unmarshal(se.Answer, &e)
		return nil, errs.WithDetail(errs.Unprocessable, "runtime.bad_reference",
			fmt.Sprintf("the registry refused the references: %v", e.Detail), e.Detail)
	case se != nil:
		return nil, &errs.Error{Kind: errs.Unavailable, Code: "runtime.registry_unavailable", Msg: fmt.Sprintf("the registry answered %d", se.Status), Err: err}
	default:
		return nil, errs.Wrap(errs.Unavailable, "runtime.registry_unavailable", err)
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
