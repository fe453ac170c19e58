package wire

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Obj builds a JSON object member by member, leaving out null values: the
// compatible platform renders every registry response with exclude_none, and several
// keys (family-prefixed aliases) are only known at run time.
type Obj struct {
	b        []byte
	nonEmpty bool
}

// NewObj starts an empty object.
func NewObj() *Obj { return NewObjSize(256) }

// NewObjSize starts an empty object with room for about n bytes, so a
// large response is built in one allocation.
func NewObjSize(n int) *Obj { return &Obj{b: append(make([]byte, 0, n), '{')} }

// ObjOn starts an object appended to b; Done returns b with the object.
func ObjOn(b []byte) *Obj { return &Obj{b: append(b, '{')} }

// Key writes the member name k; the caller writes its value (Append).
func (o *Obj) Key(k string) {
	if o.nonEmpty {
		o.b = append(o.b, ',')
	}
	o.nonEmpty = true
	o.b = strconv.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

// Put adds k unless v is nil (a nil pointer, slice, map or RawMessage).
func (o *Obj) Put(k string, v any) *Obj {
	switch x := v.(type) {
	case nil:
		return o
	case json.RawMessage:
		if x == nil {
			return o
		}
		o.Key(k)
		o.b = append(o.b, x...)
		return o
	case string:
		o.Key(k)
		o.b = appendString(o.b, x)
		return o
	case uuid.UUID:
		o.Key(k)
		o.b = append(append(append(o.b, '"'), x.String()...), '"')
		return o
	case *uuid.UUID:
		if x == nil {
			return o
		}
		return o.Put(k, *x)
	case *string:
		if x == nil {
			return o
		}
		return o.Put(k, *x)
	case time.Time:
		o.Key(k)
		o.b = appendTime(o.b, x)
		return o
	case *time.Time:
		if x == nil {
			return o
		}
		return o.Put(k, *x)
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
	o.Key(k)
	o.b = append(o.b, raw...)
	return o
}

// Append writes raw JSON produced by f, after Key.
func (o *Obj) Append(f func(b []byte) []byte) *Obj {
	o.b = f(o.b)
	return o
}

// Done closes the object and returns it.
func (o *Obj) Done() json.RawMessage { return append(o.b, '}') }

// MarshalJSON lets an obj be nested in other values.
func (o *Obj) MarshalJSON() ([]byte, error) { return o.Done(), nil }

// timeLayout is the compatible platform's datetime form: microseconds and a Z.
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
