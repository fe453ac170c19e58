// Command openapi writes the merged OpenAPI document to stdout, so the lint
// (scripts/openapi-lint.sh) checks exactly what the gateway serves.
package main

import (
	"fmt"
	"os"

	"github.com/assayhq/assay/pkg/apidoc"
)

func main() {
	b, err := apidoc.Document()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(b, '\n'))
}
