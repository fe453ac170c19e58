package apiclient_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/pkg/testutil/apiclient"
)

// TestClientIsCurrent fails when the OpenAPI document changed since the
// client was generated: run `make apiclient` (scripts/apiclient.sh).
func TestClientIsCurrent(t *testing.T) {
	raw, err := apidoc.Document()
	if err != nil {
		t.Fatal(err)
	}
	// The generator reads the document as cmd/openapi prints it: with a
	// final newline.
	sum := sha256.Sum256(append(raw, '\n'))
	if got := hex.EncodeToString(sum[:]); got != apiclient.DocumentSHA256 {
		t.Fatalf("the OpenAPI document changed since pkg/testutil/apiclient was generated (%s from %s, now %s): run make apiclient",
			apiclient.Generator, apiclient.DocumentSHA256, got)
	}
}

// TestConsoleTypesAreCurrent fails when the OpenAPI document changed since
// the console's types were generated (services/console/web/src/api/
// schema.gen.ts records the document's SHA-256 in its header): run make
// apiclient (scripts/apiclient.sh), then the console's typecheck.
func TestConsoleTypesAreCurrent(t *testing.T) {
	raw, err := apidoc.Document()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(raw, '\n'))
	want := hex.EncodeToString(sum[:])
	ts, err := os.ReadFile(filepath.Join("..", "..", "..", "services", "console", "web", "src", "api", "schema.gen.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// Document SHA-256: ([0-9a-f]{64})$`).FindSubmatch(ts)
	if m == nil {
		t.Fatal("schema.gen.ts has no \"// Document SHA-256: …\" header line: run make apiclient")
	}
	if got := string(m[1]); got != want {
		t.Fatalf("the OpenAPI document changed since services/console/web/src/api/schema.gen.ts was generated (from %s, now %s): run make apiclient",
			got, want)
	}
}
