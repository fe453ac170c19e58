package embeds

// The string-token scanner and parser on any input: they never panic, the
// tokens they find lie inside the input in order, and what one parse reads
// survives a round trip through the compatible syntax (written with JSON
// parts, which can hold any value). The seeds run as tests in every
// `go test`; scripts/fuzz.sh fuzzes from them.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var parseSeeds = []string{
	"plain text",
	"Say: @ag.embed[@ag.references[workflow.slug=snip], @ag.selector[path:parameters.prompt]]!",
	"@ag.embed[@ag.references[workflow.slug=snip],@ag.selector[path=parameters.n]]",
	"@ag.embed[@ag.references[workflow_revision.slug=snip, workflow_revision.version=0], @ag.selector[parameters.prompt]]",
	`@ag.embed[@ag.references[{"workflow_revision": {"id": "6f1c3c2e-0d6c-4a57-9b9b-1f0e4d2b7a10"}}], @ag.selector[{"path": "parameters.prompt"}]]`,
	`@ag.embed[@ag.references[{"workflow": {"slug": "a,b\"c[]"}}], @ag.selector[{"key": "k[]", "path": "x"}]]`,
	"<@ag.embed[@ag.references[workflow.slug=snip]]>",
	"@ag.embed[@ag.selector[path:a], @ag.references[environment.slug=prod]]",
	"@ag.embed[@ag.references[environment.slug=prod], @ag.selector[key:tone.revision, path:parameters.v]]",
	"@ag.embed[workflow.slug=tone;path=parameters.prompt] and @ag.embed[workflow.slug=tone,workflow_revision.version=2;key=k]",
	"@ag.embed[environment.slug=production;key=]",
	"@ag.embed[@ag.references[workflow.slug=a]",
	"@ag.embed[[[]]] @ag.embed[\"]\"] @ag.embed[",
	"@ag.embed[@ag.references[], @ag.references[x.slug=y]]",
	"@ag.embed[@ag.references[workflow.id=nope]]",
	"@ag.embed[@ag.references[workflow.slug=a]x, @ag.selector[]]",
}

func FuzzParseText(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // tokens come from decoded JSON strings, always valid UTF-8
		}
		last := 0
		for _, sp := range scanTokens(s) {
			if sp.start < last || sp.end > len(s) || sp.end-sp.start < len(embedOpen)+1 {
				t.Fatalf("token %v out of order or bounds in %q", sp, s)
			}
			tok := s[sp.start:sp.end]
			if !strings.HasPrefix(tok, embedOpen) || !strings.HasSuffix(tok, "]") {
				t.Fatalf("token %q is not @ag.embed[...]", tok)
			}
			last = sp.end
			target, sel, f := parseText(sp.inner(s))
			if f != nil {
				if f.code != "invalid_token" || f.msg == "" {
					t.Fatalf("failure %+v", f)
				}
				continue
			}
			if len(target.Refs) == 0 {
				t.Fatalf("%q parsed without references", tok)
			}
			if target.Key != nil && *target.Key == "" {
				t.Fatalf("%q parsed with an empty key", tok)
			}
			again := roundTrip(t, target, sel)
			if !reflect.DeepEqual(again.target, target) || again.sel != sel {
				t.Fatalf("%q: %+v %q, after a round trip %+v %q", tok, target, sel, again.target, again.sel)
			}
		}
	})
}

type parsed struct {
	target Target
	sel    string
}

// roundTrip writes target and sel in the compatible syntax with JSON parts
// and reads the result back as one token.
func roundTrip(t *testing.T, target Target, sel string) parsed {
	refs, err := json.Marshal(target.Refs)
	if err != nil {
		t.Fatal(err)
	}
	tok := embedOpen + refsOpen + string(refs) + "]"
	selector := map[string]string{}
	if sel != "" {
		selector["path"] = sel
	}
	if target.Key != nil {
		selector["key"] = *target.Key
	}
	if len(selector) > 0 {
		raw, _ := json.Marshal(selector)
		tok += ", " + selOpen + string(raw) + "]"
	}
	tok += "]"
	spans := scanTokens(tok)
	if len(spans) != 1 || spans[0].start != 0 || spans[0].end != len(tok) {
		t.Fatalf("%q is not read back as one token: %v", tok, spans)
	}
	tg, s, f := parseText(spans[0].inner(tok))
	if f != nil {
		t.Fatalf("%q is not read back: %s", tok, f.msg)
	}
	return parsed{tg, s}
}
