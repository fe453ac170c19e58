package secrets_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/secrets"
	"github.com/assayhq/assay/services/registry/migrations"
)

var key = []byte("0123456789abcdef0123456789abcdef")

type fixture struct {
	svc  *secrets.Service
	pool *pgxpool.Pool
	c    *secrets.Cipher
}

func newFixture(t *testing.T, max int) fixture {
	t.Helper()
	pool := pgtest.New(t)
	require.NoError(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", slog.New(slog.NewTextHandler(io.Discard, nil))))
	c, err := secrets.NewCipher(key)
	require.NoError(t, err)
	return fixture{svc: secrets.NewService(pgstore.New(pool).Secrets(), c, secrets.Limits{MaxPerProject: max}), pool: pool, c: c}
}

func project() scope.Scope { return scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()} }

func decode(t *testing.T, body string) secrets.Input {
	t.Helper()
	in, err := secrets.Decode([]byte(body))
	require.NoError(t, err)
	return in
}

const openaiBody = `{"header":{"name":"OpenAI"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-one"}}}}`

const ollamaBody = `{"header":{"name":"My Ollama","description":"local"},"secret":{"kind":"custom_provider","data":{"kind":"custom",
	"provider":{"url":"http://127.0.0.1:11434/v1","key":"ollama-key","extras":{"X-Org":"acme"}},"models":[{"slug":"llama3"},{"slug":"qwen"}],"provider_slug":"my-ollama"}}}`

func TestCreateRevealRoundTrip(t *testing.T) {
	f := newFixture(t, 10)
	ctx, sc := context.Background(), project()
	k, err := f.svc.Create(ctx, sc, decode(t, openaiBody))
	require.NoError(t, err)
	assert.Equal(t, "openai", k.Slug)
	assert.Equal(t, secrets.KindProviderKey, k.Kind)
	cp, err := f.svc.Create(ctx, sc, decode(t, ollamaBody))
	require.NoError(t, err)
	assert.Equal(t, "my-ollama", cp.Slug)
	assert.Equal(t, []secrets.Model{{Slug: "llama3"}, {Slug: "qwen"}}, cp.Data.Models)

	rs, err := f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, "sk-one", rs[0].Key)
	assert.Equal(t, "ollama-key", rs[1].Key)
	assert.Equal(t, map[string]string{"X-Org": "acme"}, rs[1].Extras)
	assert.Equal(t, "http://127.0.0.1:11434/v1", rs[1].Data.Provider.URL)

	// At rest the key is nowhere in the clear.
	var sealed []byte
	var data string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT sealed, data::text FROM secrets WHERE project_id = $1 AND id = $2`, sc.ProjectID, cp.ID).Scan(&sealed, &data))
	assert.NotContains(t, string(sealed), "ollama-key")
	assert.NotContains(t, string(sealed), "acme")
	assert.NotContains(t, data, "ollama-key")
	assert.NotContains(t, data, "acme")

	// Another project sees nothing.
	other, err := f.svc.Reveal(ctx, project())
	require.NoError(t, err)
	assert.Empty(t, other)
}

func TestNonceIsFreshPerValue(t *testing.T) {
	f := newFixture(t, 10)
	p, id := uuid.New(), uuid.New()
	seen := map[string]bool{}
	for range 100 {
		s, err := f.c.Seal(p, id, []byte("same plaintext"))
		require.NoError(t, err)
		nonce := string(s[1:13])
		require.False(t, seen[nonce], "nonce reused")
		seen[nonce] = true
	}
	// Two secrets with one key stored: different sealed bytes.
	ctx, sc := context.Background(), project()
	_, err := f.svc.Create(ctx, sc, decode(t, `{"header":{"slug":"a"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-same"}}}}`))
	require.NoError(t, err)
	_, err = f.svc.Create(ctx, sc, decode(t, `{"header":{"slug":"b"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-same"}}}}`))
	require.NoError(t, err)
	var n int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(DISTINCT sealed) FROM secrets WHERE project_id = $1`, sc.ProjectID).Scan(&n))
	assert.Equal(t, 2, n)
}

func TestSealedValueBoundToProjectAndSecret(t *testing.T) {
	f := newFixture(t, 10)
	ctx, a, b := context.Background(), project(), project()
	sa, err := f.svc.Create(ctx, a, decode(t, openaiBody))
	require.NoError(t, err)
	sb, err := f.svc.Create(ctx, b, decode(t, `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"sk-b"}}}}`))
	require.NoError(t, err)

	// Copy A's sealed value onto B's row: B's vault no longer opens.
	_, err = f.pool.Exec(ctx, `UPDATE secrets SET sealed = (SELECT sealed FROM secrets WHERE project_id = $1 AND id = $2) WHERE project_id = $3 AND id = $4`,
		a.ProjectID, sa.ID, b.ProjectID, sb.ID)
	require.NoError(t, err)
	_, err = f.svc.Reveal(ctx, b)
	require.Error(t, err)
	assert.Equal(t, errs.Internal, errs.KindOf(err))
	assert.NotContains(t, err.Error(), "sk-one")

	// Copy A's whole row into project B (same id): it does not open either.
	_, err = f.pool.Exec(ctx, `DELETE FROM secrets WHERE project_id = $1`, b.ProjectID)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `INSERT INTO secrets (project_id, id, slug, kind, name, description, data, sealed, created_at)
		SELECT $2, id, slug, kind, name, description, data, sealed, created_at FROM secrets WHERE project_id = $1`, a.ProjectID, b.ProjectID)
	require.NoError(t, err)
	_, err = f.svc.Reveal(ctx, b)
	require.ErrorIs(t, errs.From(err).Err, secrets.ErrUnseal)

	// The same bytes open in A, and not under another key.
	var sealed []byte
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT sealed FROM secrets WHERE project_id = $1`, a.ProjectID).Scan(&sealed))
	plain, err := f.c.Open(a.ProjectID, sa.ID, sealed)
	require.NoError(t, err)
	assert.Contains(t, string(plain), "sk-one")
	other, err := secrets.NewCipher([]byte("another-key-of-thirty-two-bytes!"))
	require.NoError(t, err)
	_, err = other.Open(a.ProjectID, sa.ID, sealed)
	assert.ErrorIs(t, err, secrets.ErrUnseal)
	_, err = f.c.Open(b.ProjectID, sa.ID, sealed)
	assert.ErrorIs(t, err, secrets.ErrUnseal)
	_, err = f.c.Open(a.ProjectID, uuid.New(), sealed)
	assert.ErrorIs(t, err, secrets.ErrUnseal)
	for _, bad := range [][]byte{nil, {1}, append([]byte{2}, sealed[1:]...), sealed[:len(sealed)-1]} {
		_, err = f.c.Open(a.ProjectID, sa.ID, bad)
		assert.ErrorIs(t, err, secrets.ErrUnseal)
	}
}

func TestSlugs(t *testing.T) {
	f := newFixture(t, 20)
	ctx, sc := context.Background(), project()
	for _, tc := range []struct{ body, slug string }{
		{openaiBody, "openai"},
		{`{"header":{"name":"x","slug":"work-openai"},"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{"key":"k"}}}}`, "work-openai"},
		{ollamaBody, "my-ollama"},
		{`{"header":{"name":"Team vLLM #2"},"secret":{"kind":"custom_provider","data":{"kind":"custom","provider":{"url":"https://vllm.example/v1"}}}}`, "team-vllm-2"},
		{`{"secret":{"kind":"custom_provider","data":{"kind":"azure","provider":{"url":"https://x.openai.azure.com","version":"2024-06-01","key":"az"}}}}`, "azure"},
	} {
		s, err := f.svc.Create(ctx, sc, decode(t, tc.body))
		require.NoError(t, err, tc.body)
		assert.Equal(t, tc.slug, s.Slug)
		if s.Kind == secrets.KindCustomProvider {
			assert.NotEmpty(t, s.Data.ProviderSlug, "defaults to the slug")
		}
		got, err := f.svc.Get(ctx, sc, tc.slug)
		require.NoError(t, err)
		assert.Equal(t, s.ID, got.ID)
		got, err = f.svc.Get(ctx, sc, s.ID.String())
		require.NoError(t, err)
		assert.Equal(t, tc.slug, got.Slug)
	}
	_, err := f.svc.Create(ctx, sc, decode(t, openaiBody))
	require.Error(t, err)
	assert.Equal(t, errs.Conflict, errs.KindOf(err))
	assert.Equal(t, "secrets.slug_taken", errs.From(err).Code)

	// The same slug in another project is fine.
	_, err = f.svc.Create(ctx, project(), decode(t, openaiBody))
	require.NoError(t, err)

	// Renaming onto a taken slug is a 409 too.
	s, err := f.svc.Get(ctx, sc, "azure")
	require.NoError(t, err)
	_, err = f.svc.Update(ctx, sc, s.ID, decode(t, `{"header":{"slug":"openai"}}`))
	assert.Equal(t, errs.Conflict, errs.KindOf(err))
}

func TestUpdateKeepsTheKey(t *testing.T) {
	f := newFixture(t, 10)
	ctx, sc := context.Background(), project()
	cp, err := f.svc.Create(ctx, sc, decode(t, ollamaBody))
	require.NoError(t, err)

	// Same URL, new models, no key, no extras: both kept (a new URL drops
	// them: TestURLChangeDropsTheKey).
	up, err := f.svc.Update(ctx, sc, cp.ID, decode(t, `{"header":{"name":"Renamed"},"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://127.0.0.1:11434/v1"},"models":[{"slug":"mistral"}],"provider_slug":"my-ollama"}}}`))
	require.NoError(t, err)
	assert.Equal(t, "Renamed", *up.Header.Name)
	assert.Nil(t, up.Header.Description, "the header is replaced whole")
	assert.Equal(t, "my-ollama", up.Slug)
	require.NotNil(t, up.UpdatedAt)
	rs, err := f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "ollama-key", rs[0].Key)
	assert.Equal(t, map[string]string{"X-Org": "acme"}, rs[0].Extras)
	assert.Equal(t, "http://127.0.0.1:11434/v1", rs[0].Data.Provider.URL)
	assert.Equal(t, []secrets.Model{{Slug: "mistral"}}, rs[0].Data.Models)

	// A new key and empty extras replace them.
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://10.0.0.2:11434/v1","key":"rotated","extras":{}}}}}`))
	require.NoError(t, err)
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "rotated", rs[0].Key)
	assert.Empty(t, rs[0].Extras)

	// Header only: data and key untouched.
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"header":{"name":"Only the name"}}`))
	require.NoError(t, err)
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "rotated", rs[0].Key)
	assert.Equal(t, "Only the name", *rs[0].Header.Name)

	// A provider key changing family must bring its key.
	k, err := f.svc.Create(ctx, sc, decode(t, openaiBody))
	require.NoError(t, err)
	_, err = f.svc.Update(ctx, sc, k.ID, decode(t, `{"secret":{"kind":"provider_key","data":{"kind":"anthropic","provider":{}}}}`))
	require.Error(t, err)
	assert.Equal(t, errs.Unprocessable, errs.KindOf(err))
	assert.Contains(t, errs.From(err).Msg, "key")
	_, err = f.svc.Update(ctx, sc, k.ID, decode(t, `{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{}}}}`))
	require.NoError(t, err, "same family: the key is kept")
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "sk-one", rs[1].Key)

	// Another project cannot update it.
	_, err = f.svc.Update(ctx, project(), k.ID, decode(t, `{"header":{"name":"stolen"}}`))
	assert.Equal(t, errs.NotFound, errs.KindOf(err))
}

func TestDeleteAndIsolation(t *testing.T) {
	f := newFixture(t, 10)
	ctx, a, b := context.Background(), project(), project()
	s, err := f.svc.Create(ctx, a, decode(t, openaiBody))
	require.NoError(t, err)
	for _, ref := range []string{s.ID.String(), "openai"} {
		_, err = f.svc.Get(ctx, b, ref)
		assert.Equal(t, errs.NotFound, errs.KindOf(err), ref)
	}
	assert.Equal(t, errs.NotFound, errs.KindOf(f.svc.Delete(ctx, b, s.ID)))
	require.NoError(t, f.svc.Delete(ctx, a, s.ID))
	assert.Equal(t, errs.NotFound, errs.KindOf(f.svc.Delete(ctx, a, s.ID)))
	_, err = f.svc.Get(ctx, a, "openai")
	assert.Equal(t, errs.NotFound, errs.KindOf(err))
	l, err := f.svc.List(ctx, a)
	require.NoError(t, err)
	assert.Empty(t, l)
}

func TestLimitPerProjectUnderConcurrency(t *testing.T) {
	const max = 5
	f := newFixture(t, max)
	ctx, sc := context.Background(), project()
	var wg sync.WaitGroup
	errsOut := make([]error, 3*max)
	for i := range errsOut {
		wg.Go(func() {
			body := strings.Replace(openaiBody, `"name":"OpenAI"`, `"slug":"k`+string(rune('a'+i))+`"`, 1)
			in, err := secrets.Decode([]byte(body))
			if err == nil {
				_, err = f.svc.Create(ctx, sc, in)
			}
			errsOut[i] = err
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errsOut {
		if err == nil {
			ok++
			continue
		}
		assert.Equal(t, "secrets.limit_reached", errs.From(err).Code)
	}
	assert.Equal(t, max, ok)
	l, err := f.svc.List(ctx, sc)
	require.NoError(t, err)
	assert.Len(t, l, max)
	// Another project has its own allowance.
	_, err = f.svc.Create(ctx, project(), decode(t, openaiBody))
	require.NoError(t, err)
}

func TestCreateRequires(t *testing.T) {
	f := newFixture(t, 10)
	ctx, sc := context.Background(), project()
	for body, loc := range map[string]string{
		`{"header":{"name":"x"}}`: `["body","secret"]`,
		`{"secret":{"kind":"provider_key","data":{"kind":"openai","provider":{}}}}`: `["body","secret","data","provider","key"]`,
		`{"secret":{"kind":"provider_key","data":{"kind":"openai"}}}`:               `["body","secret","data","provider","key"]`,
	} {
		_, err := f.svc.Create(ctx, sc, decode(t, body))
		require.Error(t, err, body)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err))
		d, _ := json.Marshal(errs.From(err).Detail.([]errs.FieldError)[0].Loc)
		assert.JSONEq(t, loc, string(d), body)
	}
}

// TestURLChangeDropsTheKey: a custom provider's key and extra headers were
// given for one URL; an update to another URL that does not give them
// again drops them (what a client editing the provider sends: the key is
// never shown, so it cannot send it back), so the runtime never sends them
// to a host their owner did not choose. Given again, they are kept for the
// new URL.
func TestURLChangeDropsTheKey(t *testing.T) {
	f := newFixture(t, 10)
	ctx, sc := context.Background(), project()
	cp, err := f.svc.Create(ctx, sc, decode(t, ollamaBody))
	require.NoError(t, err)

	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"header":{"name":"My Ollama"},"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"https://collector.attacker.example/v1"},"models":[{"slug":"llama3"}],"provider_slug":"my-ollama"}}}`))
	require.NoError(t, err)
	rs, err := f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "https://collector.attacker.example/v1", rs[0].Data.Provider.URL)
	assert.Empty(t, rs[0].Key, "the key stays with the URL it was stored for")
	assert.Empty(t, rs[0].Extras, "so do the extra headers")

	// Back to the first URL: what was dropped is gone for good.
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://127.0.0.1:11434/v1"}}}}`))
	require.NoError(t, err)
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Empty(t, rs[0].Key)

	// A new URL with its key and extras: kept, and kept by a later edit that
	// leaves the URL as it is.
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://10.0.0.2:11434/v1","key":"k2","extras":{"X-Org":"two"}}}}}`))
	require.NoError(t, err)
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://10.0.0.2:11434/v1"},"models":[{"slug":"qwen"}]}}}`))
	require.NoError(t, err)
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "k2", rs[0].Key)
	assert.Equal(t, map[string]string{"X-Org": "two"}, rs[0].Extras)

	// A key given alone with a new URL: the old extras do not follow.
	_, err = f.svc.Update(ctx, sc, cp.ID, decode(t, `{"secret":{"kind":"custom_provider","data":{"kind":"custom",
		"provider":{"url":"http://10.0.0.3:11434/v1","key":"k3"}}}}`))
	require.NoError(t, err)
	rs, err = f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	assert.Equal(t, "k3", rs[0].Key)
	assert.Empty(t, rs[0].Extras)
}

// TestRevealWithholdsAKeyFromAnotherURL: the sealed value names the URL it
// was sealed for, so a row whose shown URL was changed behind the service's
// back (a restored backup, a hand edit, a future bug) reveals no key nor
// extra header for the other URL.
func TestRevealWithholdsAKeyFromAnotherURL(t *testing.T) {
	f := newFixture(t, 10)
	ctx, sc := context.Background(), project()
	cp, err := f.svc.Create(ctx, sc, decode(t, ollamaBody))
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `UPDATE secrets SET data = jsonb_set(data::jsonb, '{provider,url}', '"https://collector.attacker.example/v1"')
		WHERE project_id = $1 AND id = $2`, sc.ProjectID, cp.ID)
	require.NoError(t, err)
	rs, err := f.svc.Reveal(ctx, sc)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "https://collector.attacker.example/v1", rs[0].Data.Provider.URL)
	assert.Empty(t, rs[0].Key)
	assert.Empty(t, rs[0].Extras)
}
