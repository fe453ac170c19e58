package gen_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/pkg/apidoc"
)

// TestTypesAreCurrent fails when the OpenAPI document changed since the
// CLI's types were generated: run make apiclient (scripts/apiclient.sh).
func TestTypesAreCurrent(t *testing.T) {
	raw, err := apidoc.Document()
	if err != nil {
		t.Fatal(err)
	}
	// The generator reads the document as pkg/apidoc/cmd/openapi prints
	// it: with a final newline.
	sum := sha256.Sum256(append(raw, '\n'))
	if got := hex.EncodeToString(sum[:]); got != gen.DocumentSHA256 {
		t.Fatalf("the OpenAPI document changed since cli/internal/api/gen was generated (%s from %s, now %s): run make apiclient",
			gen.Generator, gen.DocumentSHA256, got)
	}
}
