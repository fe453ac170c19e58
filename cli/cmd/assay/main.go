// Command assay is the command-line client of an Assay platform, for
// everyday work and for CI: testsets, applications, prompts, traces, API
// keys and evaluations with gates.
package main

import (
	"os"

	"github.com/assayhq/assay/cli/internal/cmd"
)

func main() {
	os.Exit(cmd.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
