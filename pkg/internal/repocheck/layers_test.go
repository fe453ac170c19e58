package repocheck

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/configtest"
)

// The registry's evaluation use cases hold rules only: the HTTP binding is
// internal/httpapi's, the SQL internal/pgstore's, the job stream the NATS
// publisher's that main wires. So a use case can be read, and tested,
// without a server, a pool or a connection, and a second transport or
// store does not reach into it. That holds only if no package a use case
// imports, however indirectly, brings a driver back: the check follows the
// whole import graph.

// registryPkg is the import path prefix of the registry's internal packages.
const registryPkg = "github.com/assayhq/assay/services/registry/internal/"

// useCases are the registry packages checked, under registryPkg.
var useCases = []string{"evaluations", "simpleevals", "evalreports", "modelcalls"}

// drivers are the import path prefixes a use case must not reach: the
// HTTP framework, the PostgreSQL driver, the NATS client, the ClickHouse
// driver.
var drivers = []string{
	"github.com/labstack/echo",
	"github.com/jackc/pgx",
	"github.com/nats-io",
	"github.com/ClickHouse",
}

func isDriver(p string) bool {
	return slices.ContainsFunc(drivers, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

// driverEdges reads, with go list -deps run in dir, the packages roots
// import directly or transitively (test files aside, as the build sees
// them), and returns each import edge that enters a drivers package from
// a package outside them, written as the chain of imports from a root to
// the driver ("…/evaluations -> …/wire -> pkg/httpx -> echo/v4").
func driverEdges(t *testing.T, dir string, roots ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f",
		`{{if not .Standard}}{{.ImportPath}} {{join .Imports " "}}{{end}}`}, roots...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v\n%s", dir, err, stderr.String())
	}
	imports := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	for _, r := range roots {
		if _, ok := imports[r]; !ok {
			t.Fatalf("go list -deps in %s did not list %s: the check would see nothing", dir, r)
		}
	}
	// Walk breadth first from the roots, so each package's chain is a
	// shortest one, and stop at a driver: what a driver imports is its own.
	via := map[string]string{}
	queue := slices.Clone(roots)
	for _, r := range roots {
		via[r] = ""
	}
	var found []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range imports[p] {
			if isDriver(imp) {
				chain := []string{imp}
				for q := p; q != ""; q = via[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				found = append(found, strings.Join(chain, " -> "))
				continue
			}
			if _, seen := via[imp]; !seen {
				if _, listed := imports[imp]; listed { // the standard library is not
					via[imp] = p
					queue = append(queue, imp)
				}
			}
		}
	}
	return found
}

func TestEvaluationUseCasesImportNoDriver(t *testing.T) {
	dir := filepath.Join(configtest.RepoRoot(t), "services", "registry")
	var roots []string
	for _, u := range useCases {
		roots = append(roots, registryPkg+u)
	}
	for _, chain := range driverEdges(t, dir, roots...) {
		t.Errorf("%s: a use case declares the interface it needs and an adapter (internal/pgstore, internal/httpapi, the NATS publisher) implements it; a helper both need moves to a package without the driver (as pkg/inputlimits left pkg/httpx)", chain)
	}
	// The check must be able to fail, directly and through an import:
	// the store adapter imports pgx, and the NATS publisher
	// (internal/evaljobs) imports no NATS package itself, only pkg/natsx
	// and pkg/evaljob, which do.
	if got := driverEdges(t, dir, registryPkg+"pgstore"); len(got) == 0 {
		t.Error("driverEdges found no driver under internal/pgstore, which imports pgx: the check sees nothing")
	}
	got := driverEdges(t, dir, registryPkg+"evaljobs")
	if !slices.ContainsFunc(got, func(chain string) bool {
		return strings.Count(chain, " -> ") >= 2 && strings.Contains(chain, "github.com/nats-io/")
	}) {
		t.Errorf("driverEdges found no chain through an import from internal/evaljobs to nats-io, only %q: the check sees direct imports only", got)
	}
}
