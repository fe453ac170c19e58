package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/assayhq/assay/pkg/testutil/configtest"
	"github.com/stretchr/testify/assert"
)

// TestDocLinks fails on a relative link of README.md or docs/ that names no
// file, or an #anchor that names no heading of its file (GitHub's slugs), so
// moving or renaming a section cannot leave a link behind.
func TestDocLinks(t *testing.T) {
	root := configtest.RepoRoot(t)
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			pages = append(pages, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // page → its headings' slugs
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		anchors[page] = slugs(string(b))
		return anchors[page], nil
	}
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			checked++
			if problem := check(root, page, l.target, anchorsOf); problem != "" {
				t.Errorf("%s:%d: link (%s): %s", page, l.line, l.target, problem)
			}
		}
	}
	t.Logf("%d links in %d pages", checked, len(pages))
}

func check(root, page, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := page
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "absolute path: make it relative to the page"
		}
		dest = filepath.Clean(filepath.Join(filepath.Dir(page), path))
		if strings.HasPrefix(dest, "..") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			return "no such file " + dest
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return fmt.Sprintf("%s has no heading with the anchor #%s", dest, anchor)
	}
	return ""
}

type link struct {
	line   int
	target string
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+(?:\([^()\s]*\))?)(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// links returns the targets of the page's inline links, outside fenced code
// blocks and code spans.
func links(doc string) []link {
	var out []link
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "``"), -1) {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

var (
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// slugs returns the anchors GitHub gives the page's headings: the heading's
// text in lower case, without markup or punctuation (letters, digits, "-"
// and "_" stay), spaces made hyphens, and "-1", "-2"... for repeats.
func slugs(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func slug(heading string) string {
	text := headingLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Command line: `assay`":                        "command-line-assay",
		"Secrets under GitOps":                         "secrets-under-gitops",
		"Kubernetes (Helm chart)":                      "kubernetes-helm-chart",
		"Enforcement, keys, audit and purge (gateway)": "enforcement-keys-audit-and-purge-gateway",
		"Ingest targets (latest) — 2 cores":            "ingest-targets-latest--2-cores",
		"[Web console](console.md): sign-in":           "web-console-sign-in",
		"`RUNTIME_EVAL_*` and `snake_case`":            "runtime_eval_-and-snake_case",
		"Prices, ¶ and ünïcode":                        "prices--and-ünïcode",
	} {
		assert.Equal(t, want, slug(heading), heading)
	}
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "a-2": true, "b": true},
		slugs("# A\n## A\n```\n# not a heading\n```\n### A\n#### B ##\n"))
}
