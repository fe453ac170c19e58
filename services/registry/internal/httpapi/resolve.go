package httpapi

import (
	"context"
	"encoding/json"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// resolveOptions reads max_depth, max_embeds and error_policy.
func resolveOptions(b *body) (embeds.Options, error) {
	o := embeds.Defaults()
	if n := b.integer("max_depth"); n != nil {
		o.MaxDepth = *n
	}
	if n := b.integer("max_embeds"); n != nil {
		o.MaxEmbeds = *n
	}
	if p := b.str("error_policy"); p != nil {
		switch *p {
		case embeds.Exception, embeds.Placeholder, embeds.Keep:
			o.Policy = *p
		default:
			b.fail("error_policy", "Input should be 'exception', 'placeholder' or 'keep'", b.m["error_policy"])
		}
	}
	return o, errOf(b)
}

func putResolution(info *embeds.Info) func(*obj) {
	return func(e *obj) { e.put("resolution_info", info) }
}

// resolveInline expands the data of an inline revision (resolve's
// <e>_revision body), answering it as sent with its data replaced.
func resolveInline(ctx context.Context, wf *workflows.Service, sc scope.Scope, key string, inline *body, o embeds.Options) (json.RawMessage, error) {
	data, info, err := wf.ResolveData(ctx, sc, inline.m["data"], nil, o)
	if err != nil {
		return nil, err
	}
	rev := map[string]json.RawMessage{}
	for k, v := range inline.m {
		rev[k] = v
	}
	rev["data"] = data
	raw, err := json.Marshal(rev)
	if err != nil {
		return nil, err
	}
	return newObj().put("count", 1).put(key, json.RawMessage(raw)).put("resolution_info", info).done(), nil
}
