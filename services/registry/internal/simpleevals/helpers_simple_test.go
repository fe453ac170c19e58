package simpleevals_test

import (
	"testing"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
)

func versionedtestNew(t *testing.T) *versioned.Service { return versionedtest.New(t) }

func scopeNew() scope.Scope { return versionedtest.Scope() }
