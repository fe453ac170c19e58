// Package registryclient is the tracing service's typed client of the
// registry: saved queries (query refs on /spans/query and /traces/query),
// and evaluators and applications that annotations and invocations refer
// to (looked up, or auto-created as the compatible platform does).
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
)

// Client calls the registry with the internal token and the caller's
// scope, as the gateway does.
type Client struct{ svc *svcclient.Client }

// New returns a client of the registry at base.
func New(base, token string, timeout time.Duration) *Client {
	return &Client{svc: svcclient.New(base, token, timeout)}
}

// Ref names an entity by id, slug or version; empty fields are left out.
type Ref struct {
	ID      string `json:"id,omitempty"`
	Slug    string `json:"slug,omitempty"`
	Version string `json:"version,omitempty"`
}

// IsZero is true when the ref names nothing.
func (r *Ref) IsZero() bool { return r == nil || (r.ID == "" && r.Slug == "" && r.Version == "") }

// QueryRefs select a saved query revision (the registry's retrieve rules).
type QueryRefs struct {
	Query    *Ref `json:"query_ref,omitempty"`
	Variant  *Ref `json:"query_variant_ref,omitempty"`
	Revision *Ref `json:"query_revision_ref,omitempty"`
}

// IsZero is true when no ref is set.
func (q QueryRefs) IsZero() bool {
	return q.Query.IsZero() && q.Variant.IsZero() && q.Revision.IsZero()
}

// QueryRevision is the stored part of a saved query revision.
type QueryRevision struct {
	ID      string    `json:"id"`
	Slug    string    `json:"slug"`
	Version string    `json:"version"`
	Data    QueryData `json:"data"`
}

// QueryData is a saved query: formatting, filtering and windowing.
type QueryData struct {
	Formatting struct {
		Focus  string `json:"focus,omitempty"`
		Format string `json:"format,omitempty"`
	} `json:"formatting"`
	Filtering json.RawMessage `json:"filtering,omitempty"`
	Windowing json.RawMessage `json:"windowing,omitempty"`
}

// RetrieveQuery resolves refs to a query revision; nil when nothing matches.
func (c *Client) RetrieveQuery(ctx context.Context, sc scope.Scope, refs QueryRefs) (*QueryRevision, error) {
	var out struct {
		Count    int            `json:"count"`
		Revision *QueryRevision `json:"query_revision"`
	}
	if err := c.post(ctx, sc, "/queries/revisions/retrieve", refs, &out); err != nil {
		return nil, err
	}
	if out.Count == 0 {
		return nil, nil
	}
	return out.Revision, nil
}

// Workflow is an evaluator or application revision with what annotations
// need: the references to store and the outputs schema to check data with.
type Workflow struct {
	// References are {<e>:{id,slug}, <e>_variant:{id,slug},
	// <e>_revision:{id,slug,version}}, from the registry's retrieval_info.
	References map[string]Ref
	// OutputsSchema is data.schemas.outputs, or nil.
	OutputsSchema json.RawMessage
}

// RetrieveWorkflow resolves ref of kind "evaluator" or "application" to its
// latest revision; nil when there is none.
func (c *Client) RetrieveWorkflow(ctx context.Context, sc scope.Scope, kind string, ref Ref) (*Workflow, error) {
	var out struct {
		Count int
		Info  struct {
			References map[string]Ref `json:"references"`
		}
	}
	var raw map[string]json.RawMessage
	if err := c.post(ctx, sc, "/"+kind+"s/revisions/retrieve", map[string]Ref{kind + "_ref": ref}, &raw); err != nil {
		return nil, err
	}
	_ = json.Unmarshal(raw["count"], &out.Count)
	if out.Count == 0 || raw[kind+"_revision"] == nil {
		return nil, nil
	}
	if err := json.Unmarshal(raw["retrieval_info"], &out.Info); err != nil {
		return nil, errs.Wrap(errs.Unavailable, "tracing.registry_response", fmt.Errorf("retrieval_info: %w", err))
	}
	var rev struct {
		Data struct {
			Schemas struct {
				Outputs json.RawMessage `json:"outputs"`
			} `json:"schemas"`
		} `json:"data"`
	}
	_ = json.Unmarshal(raw[kind+"_revision"], &rev)
	w := &Workflow{References: out.Info.References, OutputsSchema: rev.Data.Schemas.Outputs}
	if len(w.OutputsSchema) == 0 || string(w.OutputsSchema) == "null" {
		w.OutputsSchema = nil
	}
	return w, nil
}

// CreateWorkflow creates a simple evaluator or application with slug and
// data (uri, schemas); a concurrent create of the same slug (409) is not an
// error, the caller retrieves again.
func (c *Client) CreateWorkflow(ctx context.Context, sc scope.Scope, kind, slug string, data any) error {
	body := map[string]any{kind: map[string]any{"slug": slug, "name": slug, "data": data}}
	err := c.post(ctx, sc, "/simple/"+kind+"s/", body, nil)
	if err != nil && errs.KindOf(err) == errs.Conflict {
		return nil
	}
	return err
}

// post sends body as JSON and decodes a 2xx answer into out. A 409 comes
// back as errs.Conflict. A 400 or 422 is the registry refusing what the
// client sent through us (a malformed ref id, an over-long slug): a 422
// carrying the registry's detail, whose loc names the client's field (the
// bodies share their shape). Other failures are Unavailable: the registry
// being wrong or away is not the caller's fault.
func (c *Client) post(ctx context.Context, sc scope.Scope, path string, body, out any) error {
	status, data, err := c.svc.Post(ctx, sc, path, body, 64<<20)
	if err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.registry_unavailable", err)
	}
	switch {
	case status == http.StatusConflict:
		return errs.Wrap(errs.Conflict, "tracing.registry_conflict", fmt.Errorf("registry %s: 409 %s", path, data))
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		var refused struct {
			Detail json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(data, &refused) == nil && len(refused.Detail) > 0 {
			return errs.WithDetail(errs.Unprocessable, "tracing.registry_refused", "the registry refused a reference of this request", refused.Detail)
		}
		return errs.Wrap(errs.Unavailable, "tracing.registry_failed", fmt.Errorf("registry %s: %d %s", path, status, data))
	case status/100 != 2:
		return errs.Wrap(errs.Unavailable, "tracing.registry_failed", fmt.Errorf("registry %s: %d %s", path, status, data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.registry_response", fmt.Errorf("registry %s: %w", path, err))
	}
	return nil
}
