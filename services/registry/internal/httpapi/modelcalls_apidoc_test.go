package httpapi

import (
	"time"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/registry/internal/modelcalls"
)

// modelCallBindings are modelCallAPI.route's routes.
func modelCallBindings() []apidoc.Binding {
	count := apidoc.Field{Name: "count", Value: 0}
	return []apidoc.Binding{
		{Method: "POST", Path: "/api/internal/evaluations/model-calls/lookup",
			Request:  apidoc.Envelope(apidoc.Field{Name: "keys", Value: []string{}, Doc: "Content keys: 64 lowercase hex characters each."}),
			Response: apidoc.Envelope(count, apidoc.Field{Name: "entries", Value: map[string]map[string]any{}, Doc: "The live answers by key."})},
		{Method: "POST", Path: "/api/internal/evaluations/model-calls/store",
			Request:  apidoc.Envelope(apidoc.Field{Name: "entries", Value: []modelcalls.CachedAnswer{}}),
			Response: apidoc.Envelope(count)},
		{Method: "POST", Path: "/api/internal/evaluations/runs/{id}/waits",
			Request: apidoc.Envelope(apidoc.Field{Name: "provider", Value: "", Doc: "The provider (its family or custom provider slug)."},
				apidoc.Field{Name: "until", Value: time.Time{}, Doc: "When the wait should be over; at most 10 minutes ahead."}),
			Response: apidoc.Envelope(count)},
	}
}
