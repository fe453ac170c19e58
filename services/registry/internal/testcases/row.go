package testcases

import (
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/canon"
)

// UnmarshalJSON decodes a testcase from its wire shape
// {id?, data?, flags?, tags?, meta?}; other keys (testset_id, created_at, …)
// are ignored. A missing or null data becomes {}, so Data is never nil.
// id, when present and not null, must be a UUID string; data, flags, tags
// and meta must be objects or null. Violations are 422 *errs.Error values.
func (r *Row) UnmarshalJSON(b []byte) error {
	o, err := canon.ParseObject(b)
	if err != nil {
		return errs.Field("Input should be a valid testcase object", nil, "testcase")
	}
	*r = Row{}
	if v, ok := o.Get("id"); ok && v != nil {
		s, isStr := v.(string)
		id, err := uuid.Parse(s)
		if !isStr || err != nil {
			return errs.Field("Input should be a valid UUID", v, "testcase", "id")
		}
		r.ID = id
	}
	fields := []struct {
		key string
		dst **canon.Object
	}{{"data", &r.Data}, {"flags", &r.Flags}, {"tags", &r.Tags}, {"meta", &r.Meta}}
	for _, f := range fields {
		v, ok := o.Get(f.key)
		if !ok || v == nil {
			continue
		}
		obj, isObj := v.(*canon.Object)
		if !isObj {
			return errs.Field("Input should be a valid dictionary", string(canon.AppendCompact(nil, v)), "testcase", f.key)
		}
		*f.dst = obj
	}
	if r.Data == nil {
		r.Data = canon.NewObject(0)
	}
	return nil
}

// MarshalJSON renders the row in its wire shape: "id" (omitted when zero),
// "data", and "flags", "tags", "meta" when non-nil. Responses that need
// testset_id or timestamps build their own DTO around these fields.
func (r Row) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, '{')
	if r.ID != uuid.Nil {
		b = append(b, `"id":"`...)
		b = append(b, r.ID.String()...)
		b = append(b, `",`...)
	}
	b = append(b, `"data":`...)
	if r.Data == nil {
		b = append(b, "{}"...)
	} else {
		b = canon.AppendCompact(b, r.Data)
	}
	for _, f := range []struct {
		key string
		o   *canon.Object
	}{{"flags", r.Flags}, {"tags", r.Tags}, {"meta", r.Meta}} {
		if f.o != nil {
			b = append(b, `,"`...)
			b = append(b, f.key...)
			b = append(b, `":`...)
			b = canon.AppendCompact(b, f.o)
		}
	}
	return append(b, '}'), nil
}
