package repocheck

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/configtest"
)

// A comment or message must name only what a reader of the repository can
// open: a file, function or test in it, a decision record under
// docs/decisions/, or the reason itself. Ticket numbers and documents kept
// outside the repository (an issue tracker, a contract or design note next to
// the checkout) mean nothing to the next reader, so TestReferencesResolve
// refuses them in every source file a person edits.

// refused are the forms that point outside the repository, each with what a
// reader sees instead.
var refused = []struct {
	re    *regexp.Regexp
	what  string
	rfc   bool     // an RFC's section is allowed
	hints []string // the regexp runs only on text that contains one of these, lower-cased
}{
	{regexp.MustCompile(`\b(?:[Ii]ssues?|[Tt]asks?|[Tt]ickets?)\s+#?\d+`), "an issue or task number", false, []string{"issue", "task", "ticket"}},
	{regexp.MustCompile(`\((?:[Ii]ssue\s+)?#\d+\)|\b(?:[Ss]ee|[Ff]ixes|[Cc]loses|PR|[Pp]ull request)\s+#\d+`), "an issue number", false, []string{"#"}},
	{regexp.MustCompile(`\bCONTRACT\b`), "CONTRACT.md, which is not in the repository", false, []string{"contract"}},
	{regexp.MustCompile(`\b(?:design|style|client-flows|registry-contract|tracing-eval-contract)(?:\.md)?\b(?:\s+§|\.md)`), "a design document that is not in the repository", false, []string{".md", "§"}},
	{regexp.MustCompile(`\bclient-flows\b|\b(?:registry|tracing-eval)\s+contract\b`), "a document that is not in the repository", false, []string{"client-flows", "contract"}},
	{regexp.MustCompile(`(?:\.\./)+shared\b|\bshared/reference\b`), "a path outside the repository", false, []string{"shared"}},
	// README.md keeps its first screen; the topics move to pages under docs/,
	// so a comment names the page (docs/cli.md), not "the README's CLI section".
	{regexp.MustCompile(`(?:^|[^/\w])README\b(?:'s)?(?:[^.]|$)`), "a README section (name the docs/ page that holds the topic)", false, []string{"readme"}},
	// A section sign cites a numbered document; the repository's documents
	// are cited by path. RFC sections are the one outside citation a reader
	// can always open.
	{regexp.MustCompile(`(?:^|[^0-9])(?:§|\\u00[aA]7)`), "a section of a document that is not in the repository (state the rule, or name the file that holds it)", true, []string{"§", `\u00a7`}},
}

// rfcSection is the allowed form of a section sign: "RFC 9110 §15.5".
var rfcSection = regexp.MustCompile(`RFC\s?\d+,?\s*§`)

// mdPaths finds Markdown paths in text: the [start, end) of each run of
// path characters ending in ".md".
func mdPaths(text string) [][2]int {
	var out [][2]int
	for off := 0; ; {
		i := strings.Index(text[off:], ".md")
		if i < 0 {
			return out
		}
		end := off + i + 3
		off = end
		if end < len(text) && isPathByte(text[end]) && text[end] != '.' && text[end] != '/' {
			continue // .mdx, .md5
		}
		start := end - 3
		for start > 0 && isPathByte(text[start-1]) {
			start--
		}
		if start < end-3 {
			out = append(out, [2]int{start, end})
		}
	}
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-/:", c) >= 0
}

// scanned reports whether the file at rel (slash-separated, from the root) is
// source a person writes, in a language the check reads.
func scanned(rel string) bool {
	for _, skip := range []string{
		"pkg/testutil/apiclient/", // generated from pkg/apidoc by ogen
		"pkg/genproto/",           // generated from proto/ by protoc
		"pkg/prices/data/",        // vendored price tables
		"pkg/apidoc/assets/",      // vendored Redoc bundle
		"pkg/internal/repocheck/", // this check, which spells the forms out
	} {
		if strings.HasPrefix(rel, skip) {
			return false
		}
	}
	// testdata holds fixtures, some of them client payloads replayed as sent.
	if strings.Contains("/"+rel, "/testdata/") || strings.Contains("/"+rel, "/node_modules/") {
		return false
	}
	base := path.Base(rel)
	if base == "Makefile" || strings.HasPrefix(base, "Dockerfile") || base == "NOTES.txt" {
		return true
	}
	switch path.Ext(rel) {
	case ".go", ".ts", ".tsx", ".js", ".mjs", ".css", ".html", ".sh", ".yaml", ".yml", ".sql", ".proto", ".tpl", ".conf", ".xml":
		return true
	case ".json":
		// The OpenAPI descriptions are written by hand and read by users.
		return strings.HasPrefix(rel, "pkg/apidoc/")
	case ".md":
		// The decision records are cited from code comments, so they keep
		// to the same rule.
		return strings.HasPrefix(rel, "docs/decisions/")
	}
	return false
}

func TestReferencesResolve(t *testing.T) {
	root := configtest.RepoRoot(t)
	files := sourceFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d source files under %s", len(files), root)
	}
	hits := 0
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // deleted, not yet committed
				continue
			}
			t.Fatal(err)
		}
		for _, p := range problems(root, rel, b) {
			hits++
			t.Errorf("%s:%d: %s: %q", rel, p.line, p.what, p.text)
		}
	}
	if hits > 0 {
		t.Logf("%d references a reader cannot open; name the file, function, test or docs/decisions record that holds the rule, or state the reason", hits)
	}
}

type problem struct {
	line int
	what string
	text string
}

// problems finds the refused forms in b. Comments wrap, so a newline with
// the next line's indentation and comment leader reads as one space, and a
// match is reported at the line where it starts.
func problems(root, rel string, b []byte) []problem {
	text, lines := unwrap(b)
	var out []problem
	report := func(start, end int, what string) {
		out = append(out, problem{line: lines[start], what: what, text: text[start:end]})
	}
	lower := strings.ToLower(text)
	for _, r := range refused {
		if !slices.ContainsFunc(r.hints, func(h string) bool { return strings.Contains(lower, h) }) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			if r.rfc {
				from := max(0, m[0]-12)
				if loc := rfcSection.FindStringIndex(text[from:m[1]]); loc != nil && from+loc[1] == m[1] {
					continue
				}
			}
			report(m[0], m[1], r.what)
		}
	}
	for _, m := range mdPaths(text) {
		p := strings.TrimRight(text[m[0]:m[1]], ".")
		// A path is cited bare or in a URL; a URL is not checked here.
		if strings.Contains(text[max(0, m[0]-8):m[1]], "://") || strings.Contains(p, "CONTRACT") {
			continue
		}
		p = strings.TrimLeft(p, ":")
		if !strings.Contains(p, "/") && (p[0] < 'A' || p[0] > 'Z') {
			continue
		}
		if !mdExists(root, path.Dir(rel), p) {
			report(m[0], m[1], "a Markdown file that is not in the repository")
		}
	}
	return out
}

// mdExists reports whether p names a file from the root or from dir.
func mdExists(root, dir, p string) bool {
	clean := strings.TrimPrefix(path.Clean(p), "./")
	for _, c := range []string{clean, path.Join(dir, p)} {
		if strings.HasPrefix(c, "../") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(c))); err == nil {
			return true
		}
	}
	return false
}

// unwrap joins wrapped comment lines with single spaces and returns, for
// each byte of the result, the 1-based line of the input it came from.
func unwrap(b []byte) (string, []int) {
	var out strings.Builder
	lines := make([]int, 0, len(b))
	line := 1
	for i := 0; i < len(b); {
		if b[i] == '\n' {
			line++
			out.WriteByte(' ')
			lines = append(lines, line)
			i = skipLeader(b, i+1)
			continue
		}
		out.WriteByte(b[i])
		lines = append(lines, line)
		i++
	}
	return out.String(), lines
}

// skipLeader returns the index after the indentation and comment leader
// (//, #, --, * or /*) of the line starting at i.
func skipLeader(b []byte, i int) int {
	blank := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
	}
	blank()
	switch {
	case bytes.HasPrefix(b[i:], []byte("//")), bytes.HasPrefix(b[i:], []byte("--")), bytes.HasPrefix(b[i:], []byte("/*")):
		i += 2
	case i < len(b) && (b[i] == '#' || b[i] == '*'):
		i++
	}
	for i < len(b) && (b[i] == '/' || b[i] == '#' || b[i] == '*') {
		i++
	}
	blank()
	return i
}

// sourceFiles lists the files to check, slash-separated from the root: what
// git tracks or would (so ignored builds and node_modules stay out), or,
// outside a git checkout, every file but those folders.
func sourceFiles(t *testing.T, root string) []string {
	var all []string
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		for _, f := range bytes.Split(b, []byte{0}) {
			if len(f) > 0 {
				all = append(all, string(f))
			}
		}
	} else {
		t.Logf("git ls-files: %v; walking the folder instead", err)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				switch d.Name() {
				case ".git", ".run", "node_modules", "dist", "screenshots", "bin":
					return filepath.SkipDir
				}
				return nil
			}
			all = append(all, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for _, f := range all {
		if scanned(f) {
			files = append(files, f)
		}
	}
	return files
}

// TestProblemsFindsEachForm pins what the check refuses and what it lets
// through, so a loosened pattern cannot pass TestReferencesResolve silently.
func TestProblemsFindsEachForm(t *testing.T) {
	root := configtest.RepoRoot(t)
	refusedText := map[string]int{
		"// see issue 14 point 8":                        1,
		"// Issue 11: spans dated 2023":                  1,
		"// fixed in (#26)":                              1,
		"// task 3 asks for it":                          1,
		"// the rules of CONTRACT.md":                    1,
		"// (see CONTRACT: the gateway)":                 1,
		"// as reference §4.2 says":                      1,
		"// contract §2.5 steps 2–3":                     1,
		"// the flows (client-flows §2.1)":               1,
		"# see ../shared/design.md":                      1,
		"// design.md, Machines":                         1,
		"// typed calls (README \"Teams\")":              1,
		"// the README's CLI section":                    1,
		"// see docs/nope.md":                            1,
		"// wrapped: issue\n// 16, point 5":              1,
		"-- Evaluation records (reference §4.2)":         1,
		`"description": "Spec \u00a74.4: the same body"`: 1,
	}
	for text, want := range refusedText {
		got := problems(root, "pkg/x/x.go", []byte(text))
		if len(got) < want {
			t.Errorf("%q: %d problems, want at least %d", text, len(got), want)
		}
		if len(got) > 0 && got[0].line != 1 {
			t.Errorf("%q: reported at line %d, want 1", text, got[0].line)
		}
	}
	for _, text := range []string{
		"// RFC 9110 §15.5.20 names the status",
		`"  Team vLLM #2 ": "team-vllm-2"`,
		".op{border-left:4px solid #888;color:#222}",
		`[ ${#2} -ge 16 ]`,
		"// the chart's notes (deployments/README.md)",
		"// docs/api.md, compatibility",
		"// docs/decisions/0004-spans-in-a-replacingmergetree.md",
		`filepath.Join(dir, "summary.md")`,
		"// https://github.com/open-telemetry/opentelemetry-specification/blob/main/README.md",
		"// README.md at the repository root",
		"// the store's contract, method by method",
		"// the compatible platform's simple traces",
	} {
		if got := problems(root, "pkg/x/x.go", []byte(text)); len(got) > 0 {
			t.Errorf("%q: refused as %s (%q)", text, got[0].what, got[0].text)
		}
	}
	if got := problems(root, "pkg/x/x.go", []byte("package x\n\n// fine\n// as issue 12 saw\n")); len(got) != 1 || got[0].line != 4 {
		t.Errorf("line of a problem: %+v, want one at line 4", got)
	}
}
