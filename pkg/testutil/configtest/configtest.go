// Package configtest checks that a service's configuration is documented.
package configtest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/assayhq/assay/pkg/app"
)

// Documented fails unless every variable the service reads (cfg with prefix,
// and app.Main's own, app.Lifecycle) appears in README.md at the repository
// root, found by walking up from the test's folder.
func Documented(t *testing.T, prefix string, cfg any) {
	t.Helper()
	var usage bytes.Buffer
	if err := app.Usage(&usage, prefix, cfg); err != nil {
		t.Fatal(err)
	}
	readme := findReadme(t)
	for _, m := range regexp.MustCompile("`([A-Z0-9_]+)`").FindAllStringSubmatch(usage.String(), -1) {
		if !bytes.Contains(readme, []byte("`"+m[1]+"`")) {
			t.Errorf("%s is not documented in README.md (run `make config-docs`)", m[1])
		}
	}
}

func findReadme(t *testing.T) []byte {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err == nil && bytes.Contains(b, []byte("make config-docs")) {
			return b
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("README.md not found above the test folder")
		}
		dir = parent
	}
}
