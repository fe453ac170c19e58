// Package versionedtest gives the family packages' service tests a
// versioned.Service over the real pgstore on a fresh, migrated PostgreSQL
// database (pgtest), and a caller scope. Import it from tests only.
package versionedtest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

// New returns the generic service on a fresh migrated database, dropped
// when the test ends.
func New(t testing.TB) *versioned.Service {
	t.Helper()
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pgtest.Must(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", log))
	return versioned.NewService(pgstore.New(pool))
}

// Scope returns a caller in a new project.
func Scope() scope.Scope { return scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()} }

// Str returns a pointer to s.
func Str(s string) *string { return &s }
