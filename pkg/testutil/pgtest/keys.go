package pgtest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/apikey"
)

// KeySchema is the part of the gateway's schema that apikey.Verifier
// reads: keys and the tables that resolve their creator's role (see
// apikey.ProjectRoleSQL), for tests and benchmarks of services that verify
// keys without the gateway's migrations.
const KeySchema = `
	CREATE TABLE organizations (id uuid PRIMARY KEY, owner_user_id uuid NOT NULL);
	CREATE TABLE projects (id uuid PRIMARY KEY, organization_id uuid NOT NULL, workspace_id uuid NOT NULL);
	CREATE TABLE organization_memberships (organization_id uuid NOT NULL, user_id uuid NOT NULL, role text NOT NULL);
	CREATE TABLE workspace_memberships (workspace_id uuid NOT NULL, user_id uuid NOT NULL, role text NOT NULL);
	CREATE TABLE project_memberships (project_id uuid NOT NULL, user_id uuid NOT NULL, role text NOT NULL);
	CREATE TABLE api_keys (id uuid PRIMARY KEY, project_id uuid NOT NULL, prefix text NOT NULL UNIQUE,
		secret_hash text NOT NULL, created_by_id uuid, expires_at timestamptz, revoked_at timestamptz, role text)`

// KeyOwner creates KeySchema in pool and returns a project whose
// organization the returned user owns.
func KeyOwner(t testing.TB, pool *pgxpool.Pool) (project, owner uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, KeySchema)
	if err != nil {
		t.Fatalf("pgtest: key tables: %v", err)
	}
	project, org, owner := uuid.New(), uuid.New(), uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO organizations (id, owner_user_id) VALUES ($1, $2)`, org, owner); err != nil {
		t.Fatalf("pgtest: organization: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO projects (id, organization_id, workspace_id) VALUES ($1, $2, $3)`, project, org, uuid.New()); err != nil {
		t.Fatalf("pgtest: project: %v", err)
	}
	return project, owner
}

// Key stores a new API key of project created by owner, with role ("" for
// the creator's own), and returns it.
func Key(t testing.TB, pool *pgxpool.Pool, project, owner uuid.UUID, role string) apikey.Key {
	t.Helper()
	k := apikey.Generate()
	var r *string
	if role != "" {
		r = &role
	}
	_, err := pool.Exec(context.Background(), `INSERT INTO api_keys (id, project_id, prefix, secret_hash, created_by_id, role) VALUES ($1, $2, $3, $4, $5, $6)`,
		uuid.New(), project, k.Prefix, k.Hash(), owner, r)
	if err != nil {
		t.Fatalf("pgtest: key: %v", err)
	}
	return k
}
