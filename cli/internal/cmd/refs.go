package cmd

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/assayhq/assay/cli/internal/api"
)

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidRE.MatchString(s) }

func pathEscape(s string) string { return url.PathEscape(s) }

// obj is a decoded JSON object.
type obj = map[string]any

func str(m obj, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

func sub(m obj, keys ...string) obj {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	mm, _ := v.(map[string]any)
	return mm
}

func count(m obj) int {
	n, _ := m["count"].(float64)
	return int(n)
}

// retrieveRevision finds a revision of kind (testset, application,
// evaluator) through /api/<kinds>/revisions/retrieve. ref is a revision
// id, an artifact id (its latest revision), SLUG (the latest) or
// SLUG@VERSION. Nothing found is a not-found error naming ref.
func retrieveRevision(ctx context.Context, cl *api.Client, kind, ref string) (obj, error) {
	path := "/api/" + kind + "s/revisions/retrieve"
	var bodies []obj
	switch {
	case isUUID(ref):
		bodies = []obj{{kind + "_revision_ref": obj{"id": ref}}, {kind + "_ref": obj{"id": ref}}}
	case strings.Contains(ref, "@"):
		slug, version, _ := strings.Cut(ref, "@")
		bodies = []obj{{kind + "_ref": obj{"slug": slug}, kind + "_revision_ref": obj{"version": version}}}
	default:
		bodies = []obj{{kind + "_ref": obj{"slug": ref}}}
	}
	for _, b := range bodies {
		var out obj
		if err := cl.JSON(ctx, "POST", path, b, &out); err != nil {
			return nil, err
		}
		if count(out) > 0 {
			if rev := sub(out, kind+"_revision"); rev != nil {
				return rev, nil
			}
		}
	}
	return nil, api.NotFound("no %s revision %q in this project", kind, ref)
}

// findSimple finds a simple record (testset, application) by id or slug
// through /api/simple/<kinds>/query; nil when there is none.
func findSimple(ctx context.Context, cl *api.Client, kind, ref string) (obj, error) {
	r := obj{"slug": ref}
	if isUUID(ref) {
		r = obj{"id": ref}
	}
	var out map[string]json.RawMessage
	if err := cl.JSON(ctx, "POST", "/api/simple/"+kind+"s/query", obj{kind + "_refs": []obj{r}}, &out); err != nil {
		return nil, err
	}
	var list []obj
	if raw, ok := out[kind+"s"]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	return list[0], nil
}

// mustFindSimple is findSimple where absence is an error.
func mustFindSimple(ctx context.Context, cl *api.Client, kind, ref string) (obj, error) {
	rec, err := findSimple(ctx, cl, kind, ref)
	if err == nil && rec == nil {
		err = api.NotFound("no %s %q in this project", kind, ref)
	}
	return rec, err
}
