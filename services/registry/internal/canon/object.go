// Package canon holds order-preserving JSON values and the canonical JSON
// encoding that content-addressed testcase ids are hashed over.
//
// Testcase ids must equal the compatible platform's, which hashes Python's
// json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).
// encoding/json cannot reproduce that: it decodes numbers to float64 (losing
// the int/float distinction Python keeps), it forgets member order (needed to
// echo rows back as received) and it escapes differently. So this package
// keeps JSON values in a small tree:
//
//	*Object      a JSON object; members in input order, keys unique
//	[]any        a JSON array
//	string       a JSON string
//	json.Number  a JSON number, kept as its literal
//	bool, nil    true/false and null
//
// and renders them either compactly in their own order (AppendCompact) or
// exactly as Python would for hashing (AppendCanonical).
//
// Known differences from Python, all on inputs no real client sends: a lone
// UTF-16 surrogate escape ("\ud800") decodes to U+FFFD as in encoding/json,
// where Python keeps the surrogate; and integers longer than 4300 digits,
// which Python 3.11+ refuses to parse, are accepted.
package canon

import (
	"encoding/json"
)

// Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object that keeps its members in the order they were
// received. Values are *Object, []any, string, json.Number, bool or nil.
//
// Keys are unique: parsing follows Python's dict semantics for duplicate
// keys (the first occurrence keeps its position, the last value wins) and Set
// replaces in place. Code that appends to Members directly must keep keys
// unique itself.
type Object struct {
	Members []Member
}

// NewObject returns an empty object with room for n members.
func NewObject(n int) *Object {
	return &Object{Members: make([]Member, 0, n)}
}

// Len returns the number of members; a nil object has none.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Members)
}

// index returns the position of key, or -1. A linear scan: rows have a
// handful of columns, where this beats hashing and allocates nothing.
func (o *Object) index(key string) int {
	if o == nil {
		return -1
	}
	for i := range o.Members {
		if o.Members[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.Members[i].Value, true
	}
	return nil, false
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool { return o.index(key) >= 0 }

// Set replaces the value of key in place, or appends the member when key is
// absent — the same positions a Python dict assignment gives.
func (o *Object) Set(key string, v any) {
	if i := o.index(key); i >= 0 {
		o.Members[i].Value = v
		return
	}
	o.Members = append(o.Members, Member{Key: key, Value: v})
}

// Delete removes key, keeping the order of the other members, and returns
// the removed value and whether it was present (like Python's dict.pop).
func (o *Object) Delete(key string) (any, bool) {
	i := o.index(key)
	if i < 0 {
		return nil, false
	}
	v := o.Members[i].Value
	copy(o.Members[i:], o.Members[i+1:])
	o.Members[len(o.Members)-1] = Member{} // drop the reference for the GC
	o.Members = o.Members[:len(o.Members)-1]
	return v, true
}

// Clone returns a deep copy of o, so that the copy can be edited while o is
// shared (for example a cached base revision).
func (o *Object) Clone() *Object {
	if o == nil {
		return nil
	}
	c := &Object{Members: make([]Member, len(o.Members))}
	for i, m := range o.Members {
		c.Members[i] = Member{Key: m.Key, Value: Clone(m.Value)}
	}
	return c
}

// Clone returns a deep copy of a value tree. Scalars are immutable and
// returned as is.
func Clone(v any) any {
	switch t := v.(type) {
	case *Object:
		return t.Clone()
	case []any:
		if t == nil {
			return t
		}
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = Clone(e)
		}
		return c
	default:
		return v
	}
}

// MarshalJSON renders the object compactly in member order.
func (o *Object) MarshalJSON() ([]byte, error) {
	return AppendCompact(nil, o), nil
}

// UnmarshalJSON replaces o's members with the object in b. A JSON null is a
// no-op, as encoding/json expects; anything else but an object is an error.
func (o *Object) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	p, err := ParseObject(b)
	if err != nil {
		return err
	}
	o.Members = p.Members
	return nil
}

// Compile-time checks that Object plugs into encoding/json.
var (
	_ json.Marshaler   = (*Object)(nil)
	_ json.Unmarshaler = (*Object)(nil)
)
