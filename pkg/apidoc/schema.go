package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// Binding names the Go types one operation binds and renders. Services keep
// a table of them next to their routes test; TypesJSON turns the table into
// the committed <service>.types.json that Document merges, so request and
// response schemas come from the handlers' own structs and are never written
// by hand a second time.
type Binding struct {
	Method string // GET, POST, ...
	Path   string // as in the fragment: /api/keys/{id}
	// Request is a value of the type the handler binds (nil: no JSON body).
	Request any
	// Response is a value of the type the handler renders on success (nil:
	// no JSON body, or an untyped one).
	Response any
}

// Key is the operation's key in a types file: "POST /api/keys".
func (b Binding) Key() string { return strings.ToUpper(b.Method) + " " + b.Path }

// typesFile is the generated <service>.types.json.
type typesFile struct {
	Operations map[string]opTypes `json:"operations"`
	Schemas    map[string]any     `json:"schemas"`
}

type opTypes struct {
	Request  map[string]any `json:"request,omitempty"`
	Response map[string]any `json:"response,omitempty"`
}

// TypesJSON generates a service's types file from its binding table.
func TypesJSON(bindings []Binding) ([]byte, error) {
	g := newGen()
	out := typesFile{Operations: map[string]opTypes{}, Schemas: g.defs}
	for _, b := range bindings {
		if _, dup := out.Operations[b.Key()]; dup {
			return nil, fmt.Errorf("apidoc: %s bound twice", b.Key())
		}
		var o opTypes
		if b.Request != nil {
			o.Request = g.schema(reflect.TypeOf(b.Request))
		}
		if b.Response != nil {
			o.Response = g.schema(reflect.TypeOf(b.Response))
		}
		out.Operations[b.Key()] = o
	}
	if g.err != nil {
		return nil, g.err
	}
	b, err := json.MarshalIndent(out, "", "  ")
	return append(b, '\n'), err
}

// gen turns Go types into JSON Schema (the OpenAPI 3.1 dialect): named
// structs become components referenced by $ref, everything else is inlined.
type gen struct {
	defs  map[string]any
	owner map[string]reflect.Type // component name -> the type that took it
	err   error
}

func newGen() *gen { return &gen{defs: map[string]any{}, owner: map[string]reflect.Type{}} }

var (
	timeType = reflect.TypeOf(time.Time{})
	uuidType = reflect.TypeOf(uuid.UUID{})
	rawType  = reflect.TypeOf(json.RawMessage(nil))
)

// Described lets a named type give its component schema a description
// (types outside this package cannot carry struct tags on themselves).
type Described interface{ APIDescription() string }

// ComponentName is the schema name of a named Go type: its name with the
// first letter upper-cased, so unexported handler structs read well, and
// without a "doc" prefix, which types that exist only to describe a shape
// the handler builds as a map carry to stay clear of the package's names.
func ComponentName(t reflect.Type) string {
	name := t.Name()
	if name == "" {
		return ""
	}
	if len(name) > 3 && strings.HasPrefix(name, "doc") && unicode.IsUpper(rune(name[3])) {
		name = name[3:]
	}
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func (g *gen) schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case uuidType:
		return map[string]any{"type": "string", "format": "uuid"}
	case rawType:
		return map[string]any{} // any JSON value
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		name := ComponentName(t)
		if t.Name() == "" {
			n, ok := envelopeNames.Load(t)
			if !ok {
				return g.object(t)
			}
			name = n.(string)
		}
		if prev, ok := g.owner[name]; ok {
			if prev != t && g.err == nil {
				g.err = fmt.Errorf("apidoc: schema name %s is taken by %s and %s", name, prev, t)
			}
		} else {
			g.owner[name] = t
			g.defs[name] = nil // placeholder: recursive types stop here
			s := g.object(t)
			if d, ok := reflect.New(t).Elem().Interface().(Described); ok {
				s["description"] = d.APIDescription()
			}
			g.defs[name] = s
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	if g.err == nil {
		g.err = fmt.Errorf("apidoc: no schema for Go type %s", t)
	}
	return map[string]any{}
}

// object renders a struct's JSON fields. Field tags: `doc:"..."` describes
// the property, `example:"..."` gives an example (JSON, or a plain string),
// `apidoc:"required"` lists it as required, `apidoc:"nullable"` lets its
// value be null too, `apidoc:"nullable-items"` lets a slice's items be null
// (a []*T whose nil entries are sent as null).
func (g *gen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

func (g *gen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, props, required) // embedded: promoted fields
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := g.schema(f.Type)
		if _, isRef := p["$ref"]; isRef && (f.Tag.Get("doc") != "" || f.Tag.Get("example") != "") {
			p = map[string]any{"allOf": []any{p}} // siblings of $ref need a wrapper for older tools
		}
		if d := f.Tag.Get("doc"); d != "" {
			p["description"] = d
		}
		if ex := f.Tag.Get("example"); ex != "" {
			var v any
			if json.Unmarshal([]byte(ex), &v) != nil {
				v = ex
			}
			p["examples"] = []any{v}
		}
		// A nil pointer to a scalar without omitempty is rendered as null
		// (a secret's header name, an updated_at never set); so is a nil
		// map or slice tagged apidoc:"nullable".
		omitempty := strings.Contains(tag, ",omitempty") || strings.Contains(tag, ",omitzero")
		scalarPtr := f.Type.Kind() == reflect.Pointer && !omitempty
		if typ, ok := p["type"].(string); ok && (scalarPtr && typ != "object" && typ != "array" || f.Tag.Get("apidoc") == "nullable") {
			p["type"] = []any{typ, "null"}
		}
		if f.Tag.Get("apidoc") == "required" {
			*required = append(*required, name)
		}
		if items, ok := p["items"]; ok && f.Tag.Get("apidoc") == "nullable-items" {
			p["items"] = map[string]any{"oneOf": []any{items, map[string]any{"type": "null"}}}
		}
		props[name] = p
	}
}

// CheckTypes compares a service's binding table with its committed types
// file, or rewrites the file when update is set (UPDATE_APIDOC=1 in the
// service's routes test). The file sits beside this source file, found
// through the build's own path so every service's test can reach it.
func CheckTypes(service string, bindings []Binding, update bool) error {
	want, err := TypesJSON(bindings)
	if err != nil {
		return err
	}
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), service+".types.json")
	if update {
		return os.WriteFile(path, want, 0o644)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (run the %s routes test with UPDATE_APIDOC=1)", err, service)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s is stale: the Go types changed; rerun the %s routes test with UPDATE_APIDOC=1 and commit it", filepath.Base(path), service)
	}
	return nil
}

// envelopeNames maps Envelope types given a schema name by Named.
var envelopeNames sync.Map // reflect.Type -> string

// Named gives an Envelope's type a component schema name, so a shape used
// by many operations is written once and shows under its name. Envelopes
// with the same fields are the same Go type: the first name given stays.
func Named(name string, envelope any) any {
	envelopeNames.LoadOrStore(reflect.TypeOf(envelope), name)
	return envelope
}

// Field is one property of an Envelope.
type Field struct {
	Name  string // JSON name
	Value any    // a value of the property's Go type
	Doc   string
}

// Envelope returns a value of an unnamed struct type with the given JSON
// properties, for wire shapes whose keys depend on the route (the
// registry's {"count": 1, "<family>_revision": {...}}): the schema is
// still generated from Go types, the family's key from the route's table.
func Envelope(fields ...Field) any {
	sf := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		tag := `json:"` + f.Name + `,omitempty"`
		if f.Doc != "" {
			tag += ` doc:` + strconv.Quote(f.Doc)
		}
		sf[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeOf(f.Value), Tag: reflect.StructTag(tag)}
	}
	return reflect.New(reflect.StructOf(sf)).Elem().Interface()
}
