package pgtest

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RolesSQL is the path of deployments/postgres/roles.sql, the script that
// creates the services' owner and app roles.
func RolesSQL() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "deployments", "postgres", "roles.sql")
}

// Roles applies deployments/postgres/roles.sql with psql to the database at
// dbURL (a NewURL database), with role names of this test's own, and returns
// the URLs of the owner role (migrations) and the app role (the services'
// connections). The roles are dropped when the test ends.
func Roles(t testing.TB, dbURL string) (ownerURL, appURL string) {
	t.Helper()
	suffix := strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	owner, app := "owner_"+suffix, "app_"+suffix
	ownerPw, appPw := uuid.NewString(), uuid.NewString()
	out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-v", "owner="+owner, "-v", "owner_password="+ownerPw,
		"-v", "app="+app, "-v", "app_password="+appPw,
		"-f", RolesSQL(), "-d", dbURL).CombinedOutput()
	if err != nil {
		t.Fatalf("pgtest: psql roles.sql: %v\n%s", err, out)
	}
	// Registered after NewURL's drop, so it runs first: the roles own the
	// database and its objects until they are handed back.
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Logf("pgtest: drop roles: %v", err)
			return
		}
		defer c.Close(ctx)
		for _, q := range []string{
			"REASSIGN OWNED BY " + owner + ", " + app + " TO CURRENT_USER",
			"DROP OWNED BY " + owner + ", " + app,
			"DROP ROLE " + owner, "DROP ROLE " + app,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("pgtest: %s: %v", q, err)
			}
		}
	})
	as := func(user, pw string) string {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, pw)
		return u.String()
	}
	return as(owner, ownerPw), as(app, appPw)
}
