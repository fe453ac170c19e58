package query

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
)

// SavedQueries resolves saved query refs; registryclient.Client implements it.
type SavedQueries interface {
	RetrieveQuery(ctx context.Context, sc scope.Scope, refs registryclient.QueryRefs) (*registryclient.QueryRevision, error)
}

// Saved turns query refs into a request for the endpoint's focus: the stored
// filtering and windowing apply, the request overrides only limit and next.
// found is false when the refs resolve to nothing (the caller answers the empty
// envelope). A stored focus that contradicts the endpoint is a 409; a query
// saved without a focus takes the endpoint's.
func Saved(ctx context.Context, saved SavedQueries, sc scope.Scope, focus string, refs registryclient.QueryRefs, override *RawWindowing) (req Request, found bool, err error) {
	if saved == nil {
		return Request{}, false, errs.New(errs.Unavailable, "tracing.no_registry", "no registry is configured to resolve saved queries")
	}
	rev, err := saved.RetrieveQuery(ctx, sc, refs)
	if err != nil || rev == nil {
		return Request{}, false, err
	}
	if f := rev.Data.Formatting.Focus; f != "" && f != focus {
		msg := fmt.Sprintf("the saved query %s (version %s) has focus %q; use the /%ss/query endpoint", rev.Slug, rev.Version, f, f)
		return Request{}, false, errs.Message(errs.Conflict, "tracing.query_focus_mismatch", msg, map[string]any{"focus": f})
	}
	var rw *RawWindowing
	if len(rev.Data.Windowing) > 0 && string(rev.Data.Windowing) != "null" {
		rw = &RawWindowing{}
		if err := json.Unmarshal(rev.Data.Windowing, rw); err != nil {
			// The registry validated it on commit; a failure here is its bug.
			return Request{}, false, errs.Wrap(errs.Internal, "tracing.saved_windowing", err)
		}
	}
	if override != nil && (override.Limit != nil || override.Next != "") {
		if rw == nil {
			rw = &RawWindowing{}
		}
		if override.Limit != nil {
			rw.Limit = override.Limit
		}
		if override.Next != "" {
			rw.Next = override.Next
		}
	}
	w, err := rw.Parse("query_revision.data.windowing")
	if err != nil {
		return Request{}, false, err
	}
	filter := rev.Data.Filtering
	if string(filter) == "null" {
		filter = nil
	}
	return Request{Focus: focus, Filter: filter, Windowing: w}, true, nil
}
