package versioned

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/assayhq/assay/pkg/scope"
)

// maxNameSlug bounds a slug made from a name, leaving room for a "-N".
const maxNameSlug = 60

// SlugOf makes a slug from a name a person typed: lowercase ASCII letters
// and digits, every other run of characters one hyphen, accents dropped
// ("Été à Paris" → "ete-a-paris"). It is "" when nothing is left.
func SlugOf(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r): // a combining accent of the letter before
			continue
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(unicode.ToLower(r))
		default:
			hyphen = true
		}
		if b.Len() >= maxNameSlug {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// FreeSlug returns a slug made from name that no artifact of the family
// holds in the project (archived ones included: they keep theirs), trying
// "<slug>", "<slug>-2", … "<slug>-50", then a generated suffix; with
// nothing to keep in name, a generated slug. Two creates racing for the
// same name can still meet on one: the second gets the usual 409.
func (s *Service) FreeSlug(ctx context.Context, sc scope.Scope, f Family, name string) (string, error) {
	base := SlugOf(name)
	if base == "" {
		return NewSlug(), nil
	}
	cands := []string{base}
	for i := 2; i <= 50; i++ {
		cands = append(cands, fmt.Sprintf("%s-%d", base, i))
	}
	taken, err := s.QueryArtifacts(ctx, sc, f, Query{Filter: Filter{Slugs: cands}, IncludeArchived: true})
	if err != nil {
		return "", err
	}
	held := make(map[string]bool, len(taken))
	for _, a := range taken {
		held[a.Slug] = true
	}
	for _, c := range cands {
		if !held[c] {
			return c, nil
		}
	}
	return base + "-" + NewSlug()[:6], nil
}
