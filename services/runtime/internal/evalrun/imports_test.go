package evalrun_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// forbidden are the clients of our infrastructure (and its HTTP
// framework): they belong in adapters (httpapi, evalqueue, the stores),
// never in a use case.
var forbidden = []string{
	"github.com/labstack/echo",
	"github.com/jackc/pgx",
	"github.com/nats-io",
	"github.com/ClickHouse",
}

// allowed are the edges into forbidden packages a use case may still
// reach, each with its reason; none today: the job type is pkg/evaluation's,
// and only the adapters import pkg/evaljob, the EVALS stream's JetStream side.
var allowed = map[string]string{}

// TestUseCasesImportNoInfrastructure: the evaluation use cases (evalrun,
// evalmetrics) import no echo, pgx, NATS or ClickHouse package, directly
// or through any package they import, but for the edges in allowed. It
// reads the import graph with go list, as the build sees it.
func TestUseCasesImportNoInfrastructure(t *testing.T) {
	const mod = "github.com/assayhq/assay/services/runtime/internal/"
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`,
		mod+"evalrun", mod+"evalmetrics").CombinedOutput()
	require.NoError(t, err, "%s", out)
	isForbidden := func(p string) bool {
		return slices.ContainsFunc(forbidden, func(f string) bool { return p == f || strings.HasPrefix(p, f+"/") })
	}
	var bad []string
	seen := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		seen++
		if isForbidden(fields[0]) {
			continue // inside a forbidden module: reached only through an edge checked below
		}
		for _, imp := range fields[1:] {
			if edge := fields[0] + " -> " + imp; isForbidden(imp) && allowed[edge] == "" {
				bad = append(bad, edge)
			}
		}
	}
	require.Greater(t, seen, 10, "go list listed the use cases' dependencies")
	require.Empty(t, bad, "use cases reach infrastructure clients through these imports")
}
