package evaluations

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Pause records why the workers score no window of a live run for now
// (its daily budget reached: {type, message, resumes_at, ...}) under
// meta.pause, or clears it (null), for the console and the CLI. Unlike
// Cancel it changes neither the status nor is_active: the run resumes by
// itself.
func (s *Service) Pause(ctx context.Context, sc scope.Scope, id uuid.UUID, why json.RawMessage) (*Run, error) {
	if len(why) > 1<<16 {
		return nil, errs.Field("Object is too large", nil, "body", "pause")
	}
	if w := Nullable(why); w != nil && (len(w) == 0 || w[0] != '{') {
		return nil, errs.Field("Input should be an object or null", nil, "body", "pause")
	}
	var run *Run
	err := s.store.InTx(ctx, func(st Store) error {
		r, err := lockRun(ctx, st, sc.ProjectID, id)
		if err != nil {
			return err
		}
		meta := map[string]json.RawMessage{}
		if len(r.Meta) > 0 {
			_ = json.Unmarshal(r.Meta, &meta)
		}
		if Nullable(why) != nil {
			meta["pause"] = why
		} else {
			delete(meta, "pause")
		}
		r.Meta, _ = json.Marshal(meta)
		r.UpdatedAt = ptrTime(s.now())
		run, err = st.UpdateRun(ctx, sc.ProjectID, *r)
		return err
	})
	return run, err
}
