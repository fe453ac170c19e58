package httpapi_test

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/secrets"
)

// testVaultKey seals the HTTP tests' secrets (32 bytes).
var testVaultKey = []byte("assay-test-vault-key-32-bytes!!!")

// testMaxSecrets is the per-project secret limit of the HTTP tests, low so
// the limit is reached cheaply.
const testMaxSecrets = 5

// withSecrets adds the project vault on pool to s.
func withSecrets(s httpapi.Services, pool *pgxpool.Pool) httpapi.Services {
	c, err := secrets.NewCipher(testVaultKey)
	if err != nil {
		panic(err)
	}
	s.Secrets = secrets.NewService(pgstore.New(pool).Secrets(), c, secrets.Limits{MaxPerProject: testMaxSecrets})
	return s
}
