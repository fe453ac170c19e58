package environments_test

// The environment use cases (Service.Commit by data or delta,
// DeploymentChanged) over the registry service and a real PostgreSQL. A
// failure here names the environments service; the HTTP tests
// (internal/httpapi) check the routes over it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

type world struct {
	pool *pgxpool.Pool
	reg  *versioned.Service
	envs *environments.Service
	sc   scope.Scope
}

// TestService runs each contract on one migrated database, each in a
// project of its own.
func TestService(t *testing.T) {
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", log))
	reg := versioned.NewService(pgstore.New(pool))
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"ADeltaPatchesTheNewestReferences", testDeltaPatchesTheNewestReferences},
		{"ADeltaBuildsOnTheNewestRevisionThatHasReferences", testDeltaSkipsRevisionsWithoutReferences},
		{"ConcurrentDeltasLoseNoKey", testConcurrentDeltasLoseNoKey},
		{"ADeltaReadsItsBaseInTheCommitsTransaction", testDeltaReadsItsBaseInTheCommitsTransaction},
		{"CommittedSlugsAreThoseOfTheRealLineage", testSlugsAreRewritten},
		{"DeploymentChangedKeepsRevisionsThatChangedAnArtifactsDeployment", testDeploymentChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &world{pool: pool, reg: reg, envs: environments.NewService(reg), sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}})
		})
	}
}

// environment stores an environment with one variant and no revision.
func (w *world) environment(t *testing.T, slug string) *versioned.Variant {
	t.Helper()
	ctx := context.Background()
	a, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Environments, &versioned.Artifact{Slug: slug})
	require.NoError(t, err)
	v, err := w.reg.CreateVariant(ctx, w.sc, versioned.Environments, &versioned.Variant{ArtifactID: a.ID, Slug: slug + ".default"})
	require.NoError(t, err)
	return v
}

func (w *world) commit(t *testing.T, v *versioned.Variant, c environments.Commit) *versioned.Revision {
	t.Helper()
	c.ArtifactID, c.VariantID = v.ArtifactID, v.ID
	r, err := w.envs.Commit(context.Background(), w.sc, c)
	require.NoError(t, err)
	return r
}

func group(app string) environments.Group {
	id := uuid.New()
	return environments.Group{"application": {ID: &id}, "application_revision": {Slug: &app}}
}

func set(keys ...string) *environments.Delta {
	d := &environments.Delta{Set: environments.References{}}
	for _, k := range keys {
		d.Set[k] = group(k)
	}
	return d
}

func keysOf(r *versioned.Revision) []string {
	out := []string{}
	for k := range environments.ReferencesOf(r) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func testDeltaPatchesTheNewestReferences(t *testing.T, w *world) {
	v := w.environment(t, "prod")
	r := w.commit(t, v, environments.Commit{Delta: set("a.revision", "b.revision")})
	assert.Equal(t, []string{"a.revision", "b.revision"}, keysOf(r), "a delta on no revision starts from nothing")
	assert.Equal(t, 0, r.Version)

	r = w.commit(t, v, environments.Commit{Delta: &environments.Delta{Set: environments.References{"c.revision": group("c")}, Remove: []string{"a.revision"}}})
	assert.Equal(t, []string{"b.revision", "c.revision"}, keysOf(r))
	assert.Equal(t, 1, r.Version)

	r = w.commit(t, v, environments.Commit{Delta: &environments.Delta{Remove: []string{"b.revision", "c.revision"}}})
	assert.JSONEq(t, `{"references": null}`, string(r.Data), "an emptied map is stored as null")

	r = w.commit(t, v, environments.Commit{Data: &environments.Data{References: environments.References{"z.revision": group("z")}}})
	assert.Equal(t, []string{"z.revision"}, keysOf(r), "data replaces")
}

// testDeltaSkipsRevisionsWithoutReferences: the base of a delta is the
// newest non-archived revision that has references, not merely the head.
func testDeltaSkipsRevisionsWithoutReferences(t *testing.T, w *world) {
	ctx := context.Background()
	v := w.environment(t, "staging")
	w.commit(t, v, environments.Commit{Delta: set("a.revision")})
	w.commit(t, v, environments.Commit{Message: ptr("no data")})
	r := w.commit(t, v, environments.Commit{Delta: set("b.revision")})
	assert.Equal(t, []string{"a.revision", "b.revision"}, keysOf(r))

	// An archived revision is no base.
	archived := w.commit(t, v, environments.Commit{Delta: set("gone.revision")})
	_, err := w.reg.ArchiveRevision(ctx, w.sc, versioned.Environments, archived.ID, true)
	require.NoError(t, err)
	r = w.commit(t, v, environments.Commit{Delta: set("c.revision")})
	assert.Equal(t, []string{"a.revision", "b.revision", "c.revision"}, keysOf(r))
}

func ptr[T any](v T) *T { return &v }

// testConcurrentDeltasLoseNoKey: deltas are applied under the variant
// lock to the head no other commit can change meanwhile.
func testConcurrentDeltasLoseNoKey(t *testing.T, w *world) {
	v := w.environment(t, "busy")
	const n = 8
	var wg sync.WaitGroup
	errsOf := make([]error, n)
	// More commits than the pool has connections: a commit must not need
	// a second connection while it holds the variant lock. The deadline
	// turns a regression into a failure instead of a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errsOf[i] = w.envs.Commit(ctx, w.sc, environments.Commit{ArtifactID: v.ArtifactID, VariantID: v.ID,
				Delta: set(fmt.Sprintf("app%d.revision", i))})
		}()
	}
	wg.Wait()
	for _, err := range errsOf {
		require.NoError(t, err)
	}
	head, err := w.reg.LatestRevision(context.Background(), w.sc, versioned.Environments, v.ID)
	require.NoError(t, err)
	assert.Len(t, keysOf(head), n, "every deploy's key is in the head")
	assert.Equal(t, n-1, head.Version)
}

// testDeltaReadsItsBaseInTheCommitsTransaction: when the head has no
// references, the base of a delta is looked up further back under the
// variant lock, on the commit's own connection and transaction: inside a
// larger transaction it sees that transaction's revisions, and a pool of
// one connection is enough. Outside a transaction it once took a second
// connection from the pool while holding the lock, so concurrent deploys
// could exhaust the pool and stall until their lock timeout.
func testDeltaReadsItsBaseInTheCommitsTransaction(t *testing.T, w *world) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v := w.environment(t, "tx")
	var last *versioned.Revision
	err := w.reg.InTx(ctx, func(tx *versioned.Service) error {
		envs := w.envs.With(tx)
		c := environments.Commit{ArtifactID: v.ArtifactID, VariantID: v.ID}
		for _, step := range []*environments.Delta{set("a.revision"), nil, set("b.revision")} {
			c.Delta = step
			r, err := envs.Commit(ctx, w.sc, c)
			if err != nil {
				return err
			}
			last = r
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.revision", "b.revision"}, keysOf(last), "the base is the transaction's own revision")

	// One connection: the lookup behind the head must not need another.
	cfg := w.pool.Config()
	cfg.MaxConns = 1
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer one.Close()
	reg := versioned.NewService(pgstore.New(one))
	envs := environments.NewService(reg)
	v2 := w.environment(t, "one-conn")
	_, err = envs.Commit(ctx, w.sc, environments.Commit{ArtifactID: v2.ArtifactID, VariantID: v2.ID, Message: ptr("no references")})
	require.NoError(t, err)
	r, err := envs.Commit(ctx, w.sc, environments.Commit{ArtifactID: v2.ArtifactID, VariantID: v2.ID, Delta: set("c.revision")})
	require.NoError(t, err, "a delta commit on a pool of one connection")
	assert.Equal(t, []string{"c.revision"}, keysOf(r))
}

// testSlugsAreRewritten: slugs a client sends in a group are replaced by
// those of the workflow lineage the ids name; a group that resolves to
// nothing is kept as sent.
func testSlugsAreRewritten(t *testing.T, w *world) {
	ctx := context.Background()
	a, err := w.reg.CreateArtifact(ctx, w.sc, versioned.Workflows, &versioned.Artifact{Slug: "real-app"})
	require.NoError(t, err)
	wv, err := w.reg.CreateVariant(ctx, w.sc, versioned.Workflows, &versioned.Variant{ArtifactID: a.ID, Slug: "real-app.main"})
	require.NoError(t, err)
	rev, err := w.reg.Commit(ctx, w.sc, versioned.Workflows, versioned.Commit{Revision: versioned.Revision{VariantID: wv.ID, Slug: "real-rev", Data: json.RawMessage(`{}`)}})
	require.NoError(t, err)

	stale, ver := "stale", "7"
	missing := uuid.New()
	v := w.environment(t, "prod")
	r := w.commit(t, v, environments.Commit{Data: &environments.Data{References: environments.References{
		"app.revision": {"application": {ID: &a.ID, Slug: &stale}, "application_revision": {ID: &rev.ID, Slug: &stale, Version: &ver}},
		"ghost":        {"application": {ID: &missing, Slug: &stale}}, // a revision id must exist (ownRevisions)
	}}})
	refs := environments.ReferencesOf(r)
	g := refs["app.revision"]
	assert.Equal(t, "real-app", *g["application"].Slug)
	assert.Equal(t, "real-rev", *g["application_revision"].Slug, "the id is trusted over a stale version")
	_, sent := g["application_variant"]
	assert.False(t, sent, "slugs that were not sent stay absent")
	assert.Equal(t, "stale", *refs["ghost"]["application"].Slug, "an unresolvable group is kept as sent")
}

func testDeploymentChanged(t *testing.T, w *world) {
	ctx := context.Background()
	app1, app2 := uuid.New(), uuid.New()
	g := func(app uuid.UUID, rev string) environments.Group {
		return environments.Group{"application": {ID: &app}, "application_revision": {Slug: &rev}}
	}
	v := w.environment(t, "prod")
	r0 := w.commit(t, v, environments.Commit{Delta: &environments.Delta{Set: environments.References{"one": g(app1, "r1")}}})
	r1 := w.commit(t, v, environments.Commit{Delta: &environments.Delta{Set: environments.References{"two": g(app2, "r1")}}})
	r2 := w.commit(t, v, environments.Commit{Delta: &environments.Delta{Set: environments.References{"one": g(app1, "r2")}}})
	r3 := w.commit(t, v, environments.Commit{Delta: &environments.Delta{Remove: []string{"one"}}})

	all, err := w.reg.QueryRevisions(ctx, w.sc, versioned.Environments, versioned.Query{VariantRefs: []versioned.Ref{{ID: &v.ID}}})
	require.NoError(t, err)
	require.Len(t, all, 4)
	got, err := w.envs.DeploymentChanged(ctx, w.sc, all, []versioned.Ref{{ID: &app1}})
	require.NoError(t, err)
	ids := []uuid.UUID{}
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	assert.ElementsMatch(t, []uuid.UUID{r0.ID, r2.ID, r3.ID}, ids, "deployed, changed, removed; r1 left app1 as it was")
	_ = r1
}
