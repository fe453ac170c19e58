package httpapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// obj builds a JSON object member by member, leaving out null values: the
// reference renders every registry response with exclude_none, and several
// keys (family-prefixed aliases) are only known at run time.
type obj struct {
	b        []byte
	nonEmpty bool
}

func newObj() *obj { return &obj{b: append(make([]byte, 0, 256), '{')} }

func (o *obj) key(k string) {
	if o.nonEmpty {
		o.b = append(o.b, ',')
	}
	o.nonEmpty = true
	o.b = strconv.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

// put adds k unless v is nil (a nil pointer, slice, map or RawMessage).
func (o *obj) put(k string, v any) *obj {
	switch x := v.(type) {
	case nil:
		return o
	case json.RawMessage:
		if x == nil {
			return o
		}
		o.key(k)
		o.b = append(o.b, x...)
		return o
	case string:
		o.key(k)
		o.b = appendString(o.b, x)
		return o
	case uuid.UUID:
		o.key(k)
		o.b = append(append(append(o.b, '"'), x.String()...), '"')
		return o
	case *uuid.UUID:
		if x == nil {
			return o
		}
		return o.put(k, *x)
	case *string:
		if x == nil {
			return o
		}
		return o.put(k, *x)
	case time.Time:
		o.key(k)
		o.b = appendTime(o.b, x)
		return o
	case *time.Time:
		if x == nil {
			return o
		}
		return o.put(k, *x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		if rv.IsNil() {
			return o
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own values reach here
	}
	o.key(k)
	o.b = append(o.b, raw...)
	return o
}

func (o *obj) done() json.RawMessage { return append(o.b, '}') }

// MarshalJSON lets an obj be nested in other values.
func (o *obj) MarshalJSON() ([]byte, error) { return o.done(), nil }

// timeLayout is the reference's datetime form: microseconds and a Z.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

func appendString(b []byte, s string) []byte {
	raw, _ := json.Marshal(s)
	return append(b, raw...)
}

func strconvVersion(v int) string { return strconv.Itoa(v) }
