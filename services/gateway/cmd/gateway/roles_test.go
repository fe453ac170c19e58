package main

import (
	"testing"

	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/gateway/migrations"
)

// TestMigratesAsOwnerRunsAsApp: the gateway's real migrations apply as the
// owner role of deployments/postgres/roles.sql (GATEWAY_POSTGRES_MIGRATE_URL),
// and the role the service runs as reads and writes every table they create,
// listens and notifies, yet cannot change the schema.
func TestMigratesAsOwnerRunsAsApp(t *testing.T) {
	pgtest.CheckMigratesAsOwner(t, migrations.FS, "gateway_schema_version")
}
