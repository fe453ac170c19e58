package httpapi

import (
	"context"
	"encoding/json"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/wire"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

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
