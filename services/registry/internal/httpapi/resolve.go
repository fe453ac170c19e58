package httpapi

import (
	"context"
	"encoding/json"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/wire"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// resolveOptions reads max_depth, max_embeds and error_policy.
func resolveOptions(b *wire.Body) (embeds.Options, error) {
	o := embeds.Defaults()
	if n := b.Int("max_depth"); n != nil {
		o.MaxDepth = *n
	}
	if n := b.Int("max_embeds"); n != nil {
		o.MaxEmbeds = *n
	}
	if p := b.Str("error_policy"); p != nil {
		switch *p {
		case embeds.Exception, embeds.Placeholder, embeds.Keep:
			o.Policy = *p
		default:
			b.Fail("error_policy", "Input should be 'exception', 'placeholder' or 'keep'", b.Value("error_policy"))
		}
	}
	return o, wire.ErrOf(b)
}

func putResolution(info *embeds.Info) func(*wire.Obj) {
	return func(e *wire.Obj) { e.Put("resolution_info", info) }
}

// resolveInline expands the data of an inline revision (resolve's
// <e>_revision body), answering it as sent with its data replaced.
func resolveInline(ctx context.Context, wf *workflows.Service, sc scope.Scope, key string, inline *wire.Body, o embeds.Options) (json.RawMessage, error) {
	data, info, err := wf.ResolveData(ctx, sc, inline.Value("data"), nil, o)
	if err != nil {
		return nil, err
	}
	rev := map[string]json.RawMessage{}
	for k, v := range inline.Map() {
		rev[k] = v
	}
	rev["data"] = data
	raw, err := json.Marshal(rev)
	if err != nil {
		return nil, err
	}
	return wire.NewObj().Put("count", 1).Put(key, json.RawMessage(raw)).Put("resolution_info", info).Done(), nil
}
