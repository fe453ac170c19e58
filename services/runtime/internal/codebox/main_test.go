package codebox

import (
	"context"
	"os"
	"testing"
)

// TestMain probes the sandbox before the tests, as the runtime's main does
// before it serves, so that no test's first run (FuzzJavaScript's seeds
// are timed) is charged for the probe's own runs.
func TestMain(m *testing.M) {
	Status(context.Background())
	os.Exit(m.Run())
}
