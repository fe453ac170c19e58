package apidoc

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestDocumentIsClientReady checks, over the merged document, what code
// generators need and Redocly's recommended rules enforce: a unique
// operationId per operation, every path parameter declared, no trailing
// slash, error responses with the shared body, and no dangling $ref.
func TestDocumentIsClientReady(t *testing.T) {
	raw, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	param := regexp.MustCompile(`\{([^}]+)\}`)
	for p, ops := range d.Paths {
		if len(p) > 1 && strings.HasSuffix(p, "/") {
			t.Errorf("%s: trailing slash", p)
		}
		for m, rawOp := range ops {
			if !isMethod(m) {
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
				Parameters  []struct{ Name, In string }
				Responses   map[string]struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatal(err)
			}
			where := strings.ToUpper(m) + " " + p
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", where)
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %s also on %s", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			for _, mm := range param.FindAllStringSubmatch(p, -1) {
				found := false
				for _, prm := range op.Parameters {
					found = found || prm.In == "path" && prm.Name == mm[1]
				}
				if !found {
					t.Errorf("%s: path parameter %s not declared", where, mm[1])
				}
			}
			n4xx := 0
			for code, r := range op.Responses {
				if code[0] != '4' {
					continue
				}
				n4xx++
				if r.Content["application/json"].Schema["$ref"] != "#/components/schemas/ErrorBody" {
					t.Errorf("%s %s: error response without the shared error body", where, code)
				}
			}
			if n4xx == 0 && p != "/health" && p != "/metrics" && p != "/api/openapi.json" && !strings.HasPrefix(p, "/api/docs") {
				t.Errorf("%s: no 4xx response", where)
			}
		}
	}
	for _, ref := range regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := d.Components.Schemas[ref[1]]; !ok {
			t.Errorf("dangling $ref %s", ref[1])
		}
	}
	if len(ids) < 250 {
		t.Errorf("only %d operations", len(ids))
	}
}

func TestSchemaFromGoTypes(t *testing.T) {
	type docInner struct {
		When time.Time `json:"when"`
	}
	type base struct {
		ID uuid.UUID `json:"id" apidoc:"required"`
	}
	type thing struct {
		base
		Name    *string           `json:"name,omitempty" doc:"A name." example:"x"`
		Tags    map[string]string `json:"tags"`
		Inner   []docInner        `json:"inner"`
		Sides   []*docInner       `json:"sides" apidoc:"nullable-items"`
		Raw     json.RawMessage   `json:"raw"`
		Skipped string            `json:"-"`
		hidden  int
	}
	_ = thing{}.hidden
	g := newGen()
	ref := g.schema(reflect.TypeOf(thing{}))
	if g.err != nil {
		t.Fatal(g.err)
	}
	if ref["$ref"] != "#/components/schemas/Thing" {
		t.Fatalf("ref %v", ref)
	}
	got, _ := json.Marshal(g.defs)
	want := `{"Inner":{"properties":{"when":{"format":"date-time","type":"string"}},"type":"object"},` +
		`"Thing":{"properties":{"id":{"format":"uuid","type":"string"},"inner":{"items":{"$ref":"#/components/schemas/Inner"},"type":"array"},` +
		`"name":{"description":"A name.","examples":["x"],"type":"string"},"raw":{},` +
		`"sides":{"items":{"oneOf":[{"$ref":"#/components/schemas/Inner"},{"type":"null"}]},"type":"array"},"tags":{"additionalProperties":{"type":"string"},"type":"object"}},` +
		`"required":["id"],"type":"object"}}`
	if string(got) != want {
		t.Errorf("schemas\n got %s\nwant %s", got, want)
	}
	// two types may not share a schema name
	type other struct{}
	g.schema(reflect.TypeOf(struct{ A docInner }{}))
	func() {
		type docInner struct{ B int }
		g.schema(reflect.TypeOf(docInner{}))
	}()
	_ = other{}
	if g.err == nil {
		t.Error("a second Go type named Inner was accepted")
	}
}

func TestEnvelope(t *testing.T) {
	g := newGen()
	s := g.schema(reflect.TypeOf(Envelope(Field{Name: "count", Value: 0}, Field{Name: "testset_revision", Value: map[string]any{}, Doc: "d"})))
	got, _ := json.Marshal(s)
	want := `{"properties":{"count":{"type":"integer"},"testset_revision":{"additionalProperties":{},"description":"d","type":"object"}},"type":"object"}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestRedocJSFetchesNothingElsewhere: the bundle the gateway serves
// loads nothing from another host (the vendored one took its logo from
// Redocly's CDN), so the docs pages work offline and leak no visit.
func TestRedocJSFetchesNothingElsewhere(t *testing.T) {
	js := string(RedocJS())
	if !strings.Contains(string(vendoredRedocJS), redocLogo) {
		t.Fatalf("the vendored Redoc bundle no longer has the logo element this package drops; update redocLogo")
	}
	for _, cdn := range []string{"cdn.redoc.ly", `src:"http`} {
		if strings.Contains(js, cdn) {
			t.Errorf("the served Redoc bundle still loads %q", cdn)
		}
	}
	if len(js) < len(vendoredRedocJS)/2 || !strings.Contains(js, "Redoc") {
		t.Errorf("the served bundle is not the vendored one (%d of %d bytes)", len(js), len(vendoredRedocJS))
	}
}
