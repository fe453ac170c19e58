package e2e

import (
	"os"
	"testing"
)

// TestMain stops the package's shared platform (Shared) after the tests.
func TestMain(m *testing.M) { os.Exit(Main(m)) }
