// Package registryclient is the runtime's typed client of the registry:
// it retrieves the application, evaluator or workflow revision an
// invocation names (by references, or deployed to an environment), with
// its embeds resolved, over the registry's internal HTTP API in the
// caller's scope.
package registryclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// maxAnswer bounds a revision answer; a revision's data is bounded by the
// registry's own request limits, far below this.
const maxAnswer = 16 << 20

// Client calls one registry.
type Client struct{ c *svcclient.Client }

// New returns a client of the registry at base (its internal address).
func New(base, token string, timeout time.Duration) *Client {
	return &Client{c: svcclient.New(base, token, timeout)}
}

// Revision implements invoke.Revisions: POST /api/<family>s/revisions/retrieve
// with the references as <key>_ref fields and resolve set unless the caller
// turned it off. No match is (nil, nil); a reference the registry refuses
// (400/422) is errs.Unprocessable with the registry's detail.
func (c *Client) Revision(ctx context.Context, sc scope.Scope, q invoke.Lookup) (*invoke.Revision, error) {
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
