package apiclient_test

import (
	"crypto/sha256"
	"encoding/hex"
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
