package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// cli runs the real assay binary with a clean environment: only the
// variables given, a HOME and config path of the test's own.
type cli struct {
	bin  string
	home string
	env  []string
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), r.String())
	return m
}

func newCLI(t *testing.T, env ...string) *cli {
	home := t.TempDir()
	return &cli{bin: svctest.Binary(t, "cli/cmd/assay"), home: home,
		env: append([]string{"HOME=" + home, "ASSAY_CONFIG=" + filepath.Join(home, "config.yaml"), "PATH=" + os.Getenv("PATH")}, env...)}
}

func (c *cli) with(env ...string) *cli {
	return &cli{bin: c.bin, home: c.home, env: append(append([]string{}, c.env...), env...)}
}

func (c *cli) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// ok runs and requires exit 0.
func (c *cli) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := c.run(t, "", args...)
	require.Equal(t, 0, r.code, "assay %s\n%s", strings.Join(args, " "), r)
	return r
}

// fails runs and requires the exit code and a one-line error naming want.
func (c *cli) fails(t *testing.T, code int, want string, args ...string) result {
	t.Helper()
	r := c.run(t, "", args...)
	require.Equal(t, code, r.code, "assay %s\n%s", strings.Join(args, " "), r)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	assert.True(t, strings.HasPrefix(last, "assay: "), "the error is one line starting with assay: %q", r.stderr)
	assert.Contains(t, last, want)
	return r
}

func TestCLI(t *testing.T) {
	p := platformtest.Start(t)
	key := p.Account(t, "cli@example.com")
	base := newCLI(t, "ASSAY_URL="+p.URL)
	c := base.with("ASSAY_API_KEY=" + key)

	t.Run("errors are one line with a documented exit code", func(t *testing.T) {
		down := freeport.Addr(t)
		base.with("ASSAY_API_KEY="+key, "ASSAY_URL=http://"+down).fails(t, 4, "cannot reach the server at http://"+down, "keys", "list")
		base.with("ASSAY_API_KEY=not-a-key").fails(t, 5, "refused the API key (401)", "keys", "list")
		base.fails(t, 5, "no API key", "apps", "list")
		c.fails(t, 6, `no testset revision "nope"`, "testsets", "pull", "nope")
		c.fails(t, 6, "no application revision", "apps", "show", "0190f0a0-0000-7000-8000-00000000ffff")
		c.fails(t, 2, `unknown command "lst"`, "keys", "lst")
		c.fails(t, 2, "--output must be one of", "keys", "list", "-o", "xml")
		c.fails(t, 2, "accepts 1 arg", "testsets", "push")
		c.fails(t, 2, "is not METRIC OP NUMBER", "eval", "run", "--testset", "x", "--app", "y", "--evaluator", "z", "--fail-under", "exact>>1")
	})

	t.Run("login checks the key and stores it in a 0600 profile", func(t *testing.T) {
		nokey := base.with("ASSAY_PROFILE=ci")
		r := nokey.run(t, "wrong-key\n", "login")
		require.Equal(t, 5, r.code, r.String())
		_, err := os.Stat(filepath.Join(base.home, "config.yaml"))
		require.ErrorIs(t, err, os.ErrNotExist, "a refused key is not stored")

		r = nokey.run(t, key+"\n", "login")
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "as cli@example.com")
		st, err := os.Stat(filepath.Join(base.home, "config.yaml"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		cfg, _ := os.ReadFile(filepath.Join(base.home, "config.yaml"))
		assert.Contains(t, string(cfg), "current: ci")
		assert.Contains(t, string(cfg), key)

		// No key in the environment: the profile's is used; without the
		// URL either, the profile's URL.
		bare := &cli{bin: base.bin, home: base.home, env: []string{"HOME=" + base.home, "ASSAY_CONFIG=" + filepath.Join(base.home, "config.yaml")}}
		bare.ok(t, "keys", "list")
		// The environment wins over the profile; a flag over the environment.
		base.with("ASSAY_API_KEY=bad").fails(t, 5, "401", "keys", "list")
		base.with("ASSAY_API_KEY=bad").ok(t, "keys", "list", "--api-key", key)
		bare.fails(t, 5, "no API key", "keys", "list", "--profile", "other")
	})

	t.Run("keys create, list, revoke", func(t *testing.T) {
		r := c.ok(t, "keys", "create", "--name", "ci-key", "-o", "json")
		created := r.json(t)
		id, raw := created["id"].(string), created["key"].(string)
		require.NotEmpty(t, raw)
		list := c.ok(t, "keys", "list")
		assert.Contains(t, list.stdout, id)
		assert.Contains(t, list.stdout, "ci-key")
		assert.NotContains(t, list.stdout, raw, "secrets are never listed")
		assert.True(t, strings.HasPrefix(c.ok(t, "keys", "list", "-o", "csv").stdout, "id,name,prefix,created_at,expires_at\n"))
		var keys []map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.ok(t, "keys", "list", "-o", "json").stdout), &keys))
		assert.Len(t, keys, 2)

		base.with("ASSAY_API_KEY="+raw).ok(t, "keys", "list")
		c.ok(t, "keys", "revoke", id)
		base.with("ASSAY_API_KEY="+raw).fails(t, 5, "401", "keys", "list")
		c.fails(t, 6, "no key "+id, "keys", "revoke", id)
	})

	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}

	t.Run("testsets push, pull, diff", func(t *testing.T) {
		csvFile := write("qa.csv", "country,answer\nFrance,Paris\nItaly,Rome\n")
		first := c.ok(t, "testsets", "push", csvFile, "--testset", "qa", "-o", "json").json(t)
		assert.Equal(t, "created", first["action"])
		assert.EqualValues(t, 2, first["rows"])
		assert.NotContains(t, c.ok(t, "testsets", "push", csvFile, "--testset", "qa").stderr, "\r", "no bar off a terminal")

		jsonl := write("qa.jsonl", `{"country":"France","answer":"Paris"}`+"\n\n"+`{"country":"Spain","answer":"Madrid"}`+"\n")
		second := c.ok(t, "testsets", "push", jsonl, "--testset", "qa", "-o", "json").json(t)
		assert.Equal(t, "committed", second["action"])
		assert.Equal(t, first["id"], second["id"])
		assert.NotEqual(t, first["revision_id"], second["revision_id"])

		js := write("more.json", `[{"country":"Japan","answer":"Tokyo"}]`)
		created := c.ok(t, "testsets", "push", js, "-o", "json").json(t)
		assert.Equal(t, "more", created["slug"], "the slug defaults to the file name")
		assert.Contains(t, c.ok(t, "testsets", "list").stdout, "more")

		pulled := c.ok(t, "testsets", "pull", "qa", "-o", "csv").stdout
		assert.True(t, strings.HasPrefix(pulled, "country,answer"), pulled)
		assert.Contains(t, pulled, "Madrid")
		assert.NotContains(t, pulled, "Rome")
		var rows []map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.ok(t, "testsets", "pull", "qa", "-o", "json").stdout), &rows))
		require.Len(t, rows, 2)
		assert.Equal(t, "Spain", rows[1]["country"])
		table := c.ok(t, "testsets", "pull", "qa", "--revision", first["revision_id"].(string)).stdout
		assert.Contains(t, table, "COUNTRY")
		assert.Contains(t, table, "Rome")
		out := filepath.Join(dir, "pulled.json")
		c.ok(t, "testsets", "pull", "qa", "-f", out)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(b), "Madrid")

		d := c.ok(t, "testsets", "diff", first["revision_id"].(string), second["revision_id"].(string)).stdout
		assert.Contains(t, d, `- row 2 (Italy): {"country":"Italy","answer":"Rome"}`)
		assert.Contains(t, d, `+ row 2 (Spain): {"country":"Spain","answer":"Madrid"}`)
		assert.Contains(t, d, "1 added, 1 removed, 0 changed, 1 unchanged")
		dj := c.ok(t, "testsets", "diff", first["revision_id"].(string), "qa", "-o", "json").json(t)
		assert.Equal(t, []any{map[string]any{"answer": "Madrid", "country": "Spain"}}, dj["added"])
		assert.Equal(t, []any{map[string]any{"answer": "Rome", "country": "Italy"}}, dj["removed"])
		assert.Equal(t, "no differences\n", c.ok(t, "testsets", "diff", "qa", second["revision_id"].(string)).stdout)

		t.Run("a progress bar on a terminal only", func(t *testing.T) {
			if _, err := exec.LookPath("script"); err != nil {
				t.Skip("util-linux script (runs a command on a pseudo-terminal) is not installed")
			}
			var big strings.Builder
			big.WriteString("country,answer\n")
			for i := 0; big.Len() < 3<<19; i++ {
				fmt.Fprintf(&big, "country %d,%s\n", i, strings.Repeat("x", 60))
			}
			file := write("big.csv", big.String())
			cmd := exec.Command("script", "-qec", c.bin+" testsets push "+file+" --testset big", "/dev/null")
			cmd.Env = c.env
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Contains(t, string(out), "\r\x1b[Kuploading [", "redrawn in place")
			assert.Contains(t, string(out), "] 100% 1.5 MiB / 1.5 MiB")
			assert.Contains(t, string(out), "uploading 1.5 MiB sent")
			r := c.ok(t, "testsets", "push", file, "--testset", "big")
			assert.Equal(t, "", r.stderr, "no bar off a terminal")
			assert.Contains(t, r.stdout, "unchanged")
		})

		bad := write("bad.csv", "a,b\n1,2\n3,\"x\n4,5\n")
		c.fails(t, 1, "line 3", "testsets", "push", bad, "--testset", "qa")
		c.fails(t, 1, "line 2 of the JSONL file", "testsets", "push", write("bad.jsonl", "{\"a\":1}\nnot json\n"), "--testset", "qa")
		c.fails(t, 2, "cannot tell the format", "testsets", "push", write("x.txt", "a\n"))
		c.fails(t, 1, "no such file", "testsets", "push", filepath.Join(dir, "missing.csv"))
	})

	t.Run("a testset made in the console: pulled by its name, diffed by row identity", func(t *testing.T) {
		// Its own project, so the slug is free whatever the other subtests make.
		key := p.Account(t, "console-testsets@example.com")
		c := base.with("ASSAY_API_KEY=" + key)
		var rows strings.Builder
		rows.WriteString("country,correct_answer\n")
		for i := 0; i < 42; i++ {
			fmt.Fprintf(&rows, "Country %02d,Capital %02d\n", i, i)
		}
		// What the console's upload form sends: a name, no slug.
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		require.NoError(t, mw.WriteField("file_type", "csv"))
		require.NoError(t, mw.WriteField("testset_name", "Capitals QA"))
		fw, err := mw.CreateFormFile("file", "capitals.csv")
		require.NoError(t, err)
		_, _ = fw.Write([]byte(rows.String()))
		require.NoError(t, mw.Close())
		req, err := http.NewRequest("POST", p.URL+"/api/simple/testsets/upload", &body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "ApiKey "+key)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)

		pulled := c.ok(t, "testsets", "pull", "capitals-qa", "-o", "csv").stdout
		assert.True(t, strings.HasPrefix(pulled, "country,correct_answer\nCountry 00,Capital 00\n"), "no id columns by default:\n%s", pulled)
		withIDs := c.ok(t, "testsets", "pull", "capitals-qa", "-o", "csv", "--with-ids").stdout
		assert.True(t, strings.HasPrefix(withIDs, "country,correct_answer,__dedup_id__,__id__\n"), withIDs)

		// The console's edit: an empty column added, one answer changed.
		rev := p.MustJSON(t, "POST", "/api/testsets/revisions/retrieve", key, map[string]any{"testset_ref": map[string]any{"slug": "capitals-qa"}})["testset_revision"].(map[string]any)
		tc := rev["data"].(map[string]any)["testcases"].([]any)[3].(map[string]any)
		data := tc["data"].(map[string]any)
		data["correct_answer"], data["notes"] = "Capital three", ""
		p.MustJSON(t, "POST", "/api/testsets/revisions/commit", key, map[string]any{"testset_revision": map[string]any{
			"testset_id": rev["testset_id"], "testset_variant_id": rev["testset_variant_id"], "testset_revision_id": rev["id"], "message": "notes",
			"delta": map[string]any{"columns": map[string]any{"add": []any{"notes"}}, "rows": map[string]any{"replace": []any{map[string]any{"id": tc["id"], "data": data}}}}}})

		d := c.ok(t, "testsets", "diff", "capitals-qa@1", "capitals-qa").stdout
		assert.Contains(t, d, "column added: notes")
		assert.Contains(t, d, `row 4 (Country 03): correct_answer "Capital 03" → "Capital three"`)
		assert.Contains(t, d, "0 added, 0 removed, 1 changed, 41 unchanged")
		assert.Less(t, strings.Count(d, "\n"), 10, "one line per change, not 42 rows removed and re-added:\n%s", d)
		dj := c.ok(t, "testsets", "diff", "capitals-qa@1", "capitals-qa", "-o", "json").json(t)
		assert.Equal(t, []any{"notes"}, dj["columns_added"])
		assert.Empty(t, dj["added"])
		assert.Empty(t, dj["removed"])
		require.Len(t, dj["changed"], 1)
		assert.Equal(t, map[string]any{"row": float64(4), "name": "Country 03",
			"changes": map[string]any{"correct_answer": map[string]any{"before": "Capital 03", "after": "Capital three"}}}, dj["changed"].([]any)[0])
	})

	params := func(content string) map[string]any {
		return map[string]any{"prompt": map[string]any{
			"messages":   []any{map[string]any{"role": "user", "content": content}},
			"input_keys": []any{"country"}, "llm_config": map[string]any{"model": "gpt-4o-mini"}}}
	}
	app := p.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"slug": "capitals", "name": "Capitals", "flags": map[string]any{"is_application": true},
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": params("{{country}}")}}})["application"].(map[string]any)

	t.Run("apps list, show, deploy", func(t *testing.T) {
		assert.Contains(t, c.ok(t, "apps", "list").stdout, "capitals")
		csv := c.ok(t, "apps", "list", "-o", "csv").stdout
		assert.Contains(t, csv, app["id"].(string)+",capitals,Capitals,")
		show := c.ok(t, "apps", "show", "capitals").stdout
		assert.Contains(t, show, "svc:builtin:completion:v0")
		assert.Contains(t, show, "{{country}}")
		c.ok(t, "apps", "deploy", "capitals", "production", "-m", "from the cli")
		dep := p.MustJSON(t, "POST", "/api/applications/revisions/retrieve", key,
			map[string]any{"environment_ref": map[string]any{"slug": "production"}, "key": "capitals.revision"})
		assert.Equal(t, app["revision_id"], dep["application_revision"].(map[string]any)["id"])
		c.fails(t, 6, "not found (404)", "apps", "deploy", "capitals", "nowhere")
		c.fails(t, 6, "no application revision", "apps", "deploy", "nope", "production")
	})

	t.Run("prompts pull and push round-trip through YAML", func(t *testing.T) {
		file := filepath.Join(dir, "capitals.yaml")
		c.ok(t, "prompts", "pull", "capitals", "-f", file)
		y, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(y), "# assay: application capitals, revision "+app["revision_id"].(string))
		assert.Contains(t, string(y), "content: '{{country}}'")
		require.NoError(t, os.WriteFile(file, bytes.Replace(y, []byte("'{{country}}'"), []byte("'Capital of {{country}}?'"), 1), 0o644))
		pushed := c.ok(t, "prompts", "push", "capitals", file, "-m", "ask for the capital", "-o", "json").json(t)
		rev := pushed["application_revision"].(map[string]any)
		assert.NotEqual(t, app["revision_id"], rev["id"])
		assert.Equal(t, "ask for the capital", rev["message"])
		jsonParams := c.ok(t, "prompts", "pull", "capitals", "--format", "json").stdout
		assert.Contains(t, jsonParams, `"content": "Capital of {{country}}?"`)
		assert.Contains(t, jsonParams, `"model": "gpt-4o-mini"`, "the rest of the parameters is kept")
		// The file as pulled, pushed again (as a CI job on every build
		// would): nothing to commit.
		c.ok(t, "prompts", "pull", "capitals", "-f", file)
		again := c.ok(t, "prompts", "push", "capitals", file)
		assert.Equal(t, "unchanged: capitals v"+fmt.Sprint(rev["version"]), strings.TrimSpace(again.stdout), again.String())
		latest := c.ok(t, "prompts", "push", "capitals", file, "-o", "json").json(t)
		assert.Equal(t, "unchanged", latest["status"])
		assert.Equal(t, rev["id"], latest["application_revision"].(map[string]any)["id"], "no revision committed")
		forced := c.ok(t, "prompts", "push", "capitals", file, "--force", "-o", "json").json(t)
		assert.NotEqual(t, rev["id"], forced["application_revision"].(map[string]any)["id"], "--force commits anyway")
		old := c.ok(t, "prompts", "pull", "capitals", "--revision", app["revision_id"].(string)).stdout
		assert.Contains(t, old, "'{{country}}'")
		c.fails(t, 1, "capitals.yaml", "prompts", "push", "capitals", write("capitals.yaml", "prompt: [unclosed"))
	})

	t.Run("traces get and tail", func(t *testing.T) {
		// tail follows: started before the invocation, it prints it.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		tail := exec.CommandContext(ctx, c.bin, "traces", "tail", "--app", "capitals", "--count", "1", "--interval", "300ms", "-o", "json")
		tail.Env = c.env
		var tailOut, tailErr bytes.Buffer
		tail.Stdout, tail.Stderr = &tailOut, &tailErr
		require.NoError(t, tail.Start())
		time.Sleep(time.Second) // its first poll found nothing new
		inv := p.MustJSON(t, "POST", "/services/completion/v0/invoke", key, map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "capitals"}},
			"data":       map[string]any{"inputs": map[string]any{"country": "France"}}})
		traceID := inv["trace_id"].(string)
		require.NoError(t, tail.Wait(), "stdout %s stderr %s", tailOut.String(), tailErr.String())
		var line map[string]any
		require.NoError(t, json.Unmarshal(tailOut.Bytes(), &line), tailOut.String())
		assert.Equal(t, traceID, line["trace_id"])

		tree := c.ok(t, "traces", "get", traceID).stdout
		assert.Contains(t, tree, "trace "+traceID)
		assert.Regexp(t, `└── \S+ \[workflow\]`, tree)
		assert.Regexp(t, `    └── \S+ \[chat\]`, tree, "the model call is the root's child")
		assert.Contains(t, tree, "echo: Capital of France?")
		spans := c.ok(t, "traces", "get", traceID, "-o", "csv").stdout
		assert.Contains(t, spans, "depth,span_id,parent_id")
		assert.Equal(t, 3, strings.Count(spans, "\n"), spans)
		c.fails(t, 6, "no trace", "traces", "get", "0123456789abcdef0123456789abcdef")

		// --since prints what is already there, filtered.
		r := c.ok(t, "traces", "tail", "--since", "10m", "--count", "1", "--for", "20s", "--filter", "trace_type=invocation")
		assert.Contains(t, r.stdout, traceID)
		assert.Contains(t, r.stdout, "TRACE_ID")
		r = c.ok(t, "traces", "tail", "--since", "10m", "--for", "1s", "--app", "nope", "-o", "csv")
		assert.Equal(t, "", r.stdout, "nothing matched, nothing printed")
	})

	t.Run("eval run, gates, junit, summary, compare", func(t *testing.T) { testEval(t, p, c, key, dir) })
}

// testEval runs evaluations through the CLI: a good application (every
// answer exact) and a bad one (none), so the gates' outcomes are known.
func testEval(t *testing.T, p *platformtest.Platform, c *cli, key, dir string) {
	status, body := p.Do(t, "POST", "/api/simple/evaluations/query", "ApiKey "+key, map[string]any{})
	if status == 404 || status == 405 {
		t.Skipf("the platform has no POST /api/simple/evaluations/query yet (%d %s): a platform without evaluation records", status, body)
	}
	var rows []any
	countries := []string{"France", "Italy", "Spain", "Japan", "Peru", "Chile", "Kenya", "Egypt", "Nepal", "Laos"}
	for _, country := range countries {
		rows = append(rows, map[string]any{"data": map[string]any{"country": country, "answer": "echo: " + country}})
	}
	p.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{"slug": "capitals-qa", "data": map[string]any{"testcases": rows}}})
	for slug, content := range map[string]string{"good": "{{country}}", "bad": "Say {{country}}"} {
		p.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
			"slug": slug, "flags": map[string]any{"is_application": true},
			"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
				"messages":   []any{map[string]any{"role": "user", "content": content}},
				"input_keys": []any{"country"}, "llm_config": map[string]any{"model": "gpt-4o-mini"}}}}}})
	}
	p.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{"slug": "exact",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "answer"}}}})

	args := func(app string, extra ...string) []string {
		return append([]string{"eval", "run", "--testset", "capitals-qa", "--app", app, "--evaluator", "exact", "--timeout", "2m"}, extra...)
	}
	junit := filepath.Join(dir, "junit.xml")
	summary := filepath.Join(dir, "summary.md")

	good := c.ok(t, args("good", "--fail-under", "exact.success>=0.9", "--junit", junit, "--summary", summary, "-o", "json")...)
	gj := good.json(t)
	goodRun := gj["run_id"].(string)
	assert.Equal(t, "success", gj["status"])
	metric := func(out map[string]any, name string) map[string]any {
		for _, m := range out["metrics"].([]any) {
			if m.(map[string]any)["name"] == name {
				return m.(map[string]any)
			}
		}
		t.Fatalf("no metric %s in %v", name, out["metrics"])
		return nil
	}
	assert.Equal(t, 1.0, metric(gj, "exact.success")["value"])
	assert.EqualValues(t, 10, metric(gj, "exact.success")["count"])
	assert.Contains(t, good.stderr, "cells 30/30", "the last progress line counts every cell")
	assert.NotContains(t, good.stderr, "\r", "plain lines off a terminal")

	var suite struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &suite), string(b))
	assert.Equal(t, "assay eval capitals-qa × good", suite.Name, "the suite names the testset and the application once")
	assert.Equal(t, 1, suite.Tests)
	assert.Equal(t, 0, suite.Failures)
	assert.Equal(t, "exact.success>=0.9", suite.Cases[0].Name)
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| `exact.success` | binary | 10 | 1 |")
	assert.Contains(t, string(md), "| `exact.success>=0.9` | ✅ pass |")

	t.Run("a threshold below is exit 3 with a JUnit failure", func(t *testing.T) {
		r := c.run(t, "", args("bad", "--fail-under", "exact.success>=0.9", "--fail-under", "exact.nope>0", "--junit", junit)...)
		require.Equal(t, 3, r.code, r.String())
		assert.Contains(t, r.stderr, "assay: 2 of 2 gates failed")
		assert.Regexp(t, `exact\.success>=0\.9\s+FAIL\s+exact\.success = 0 \(n=10\), wanted >= 0\.9`, r.stdout)
		assert.Contains(t, r.stdout, "the run has no metric exact.nope")
		b, err := os.ReadFile(junit)
		require.NoError(t, err)
		suite.Cases = nil
		require.NoError(t, xml.Unmarshal(b, &suite))
		assert.Equal(t, 2, suite.Failures)
		require.Len(t, suite.Cases, 2)
		require.NotNil(t, suite.Cases[0].Failure)
	})

	t.Run("a run whose evaluator errors prints the cells' errors", func(t *testing.T) {
		p.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{"slug": "exact-nope",
			"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "nope"}}}})
		r := c.run(t, "", "eval", "run", "--testset", "capitals-qa", "--app", "good", "--evaluator", "exact-nope", "--timeout", "2m")
		require.Equal(t, 1, r.code, r.String())
		// Ten cells failing the same way: one line with their count.
		assert.Regexp(t, `(?m)^failed: exact-nope \(10 cells\): .*the testcase has no nope`, r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "failed: "), r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		assert.Contains(t, lines[len(lines)-1], "assay: run ", "the exit reason stays the last line")
	})

	var badRun string
	t.Run("the baseline gate: worse beyond the interval fails, better passes", func(t *testing.T) {
		r := c.run(t, "", args("bad", "--baseline", goodRun, "-o", "json")...)
		require.Equal(t, 3, r.code, r.String())
		out := r.json(t)
		badRun = out["run_id"].(string)
		gates := out["gates"].([]any)
		require.Len(t, gates, 1)
		g := gates[0].(map[string]any)
		assert.Equal(t, false, g["passed"])
		assert.Contains(t, g["message"], "Δ -1.0000")
		assert.Contains(t, g["message"], "; regressed (holm over", "the gate reads the comparison's verdict")

		r = c.run(t, "", args("good", "--baseline", badRun)...)
		require.Equal(t, 0, r.code, r.String())
		assert.Regexp(t, `exact\.success vs baseline \S+\s+pass`, r.stdout)
		c.fails(t, 6, "no run", args("good", "--baseline", "0190f0a0-0000-7000-8000-00000000ffff")...)
	})

	t.Run("a revision against itself: every verdict inconclusive", func(t *testing.T) {
		r := c.run(t, "", args("good", "--against-itself", "-o", "json")...)
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stderr, "(baseline): run ", "the first run is named the baseline")
		gates := r.json(t)["gates"].([]any)
		require.Len(t, gates, 1)
		g := gates[0].(map[string]any)
		assert.Equal(t, true, g["passed"])
		assert.Regexp(t, `; inconclusive \(holm over \d+ tests: p=1,`, g["message"])
		c.fails(t, 2, "--against-itself is its own baseline", args("good", "--against-itself", "--baseline", goodRun)...)
	})

	t.Run("eval show and compare", func(t *testing.T) {
		show := c.ok(t, "eval", "show", goodRun, "-o", "csv").stdout
		assert.Contains(t, show, "exact.success,binary,10,1")
		if badRun == "" {
			t.Skip("no second run")
		}
		status, body := p.Do(t, "POST", "/api/evaluations/runs/compare", "ApiKey "+key, map[string]any{"run_ids": []string{goodRun, badRun}})
		if status == 404 || status == 405 {
			t.Skipf("the platform has no POST /api/evaluations/runs/compare yet (%d %s)", status, body)
		}
		r := c.ok(t, "eval", "compare", goodRun, badRun, "-o", "json")
		assert.Contains(t, r.stdout, goodRun)
		table := c.ok(t, "eval", "compare", goodRun, badRun).stdout
		assert.Contains(t, table, "success")
	})
}
