package purge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// TestDeletingAnOrganizationPurgesItsProjects builds a project with a
// testset, an application, an evaluation run and traces, deletes its
// organization through the gateway, and reads PostgreSQL, ClickHouse and
// JetStream directly: nothing of the project is left but its audit rows.
func TestDeletingAnOrganizationPurgesItsProjects(t *testing.T) {
	ctx := context.Background()
	p := platformtest.Start(t)
	key := p.Account(t, "doomed@example.com")
	bystander := p.Account(t, "bystander@example.com")
	pool, err := pgxpool.New(ctx, p.PostgresURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var project, org uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `SELECT p.id, p.organization_id FROM api_keys k JOIN projects p ON p.id = k.project_id
		WHERE k.prefix = $1`, key[:8]).Scan(&project, &org))

	data := func(k string) {
		p.MustJSON(t, "POST", "/api/simple/testsets", k, map[string]any{"testset": map[string]any{"slug": "qa", "name": "QA",
			"data": map[string]any{"testcases": []any{map[string]any{"data": map[string]any{"q": "2+2", "a": "4"}}}}}})
		p.MustJSON(t, "POST", "/api/simple/applications", k, map[string]any{"application": map[string]any{"slug": "bot",
			"data": map[string]any{"uri": "svc:builtin:completion:v0"}}})
		p.MustJSON(t, "POST", "/api/evaluations/runs", k, map[string]any{"runs": []any{map[string]any{"name": "r1"}}})
		id := strings.ReplaceAll(uuid.NewString(), "-", "")
		start := time.Now().UTC().Format(time.RFC3339Nano)
		status, body := p.Do(t, "POST", "/api/tracing/spans/ingest", "ApiKey "+k, map[string]any{"spans": []any{
			map[string]any{"trace_id": id, "span_id": id[:16], "span_name": "root", "start_time": start},
			map[string]any{"trace_id": id, "span_id": id[16:], "parent_id": id[:16], "span_name": "child", "start_time": start},
		}})
		require.Equal(t, http.StatusAccepted, status, string(body))
		require.Eventually(t, func() bool {
			return p.MustJSON(t, "GET", "/api/traces/"+id, k, nil)["count"] == 1.0
		}, 30*time.Second, 100*time.Millisecond, "the trace is stored")
	}
	data(key)
	data(bystander)

	ch, err := chx.Open(ctx, chx.Config{URL: p.ClickHouseURL, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })
	nc, err := nats.Connect(p.NATSURL)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)

	// What is left of a project: rows in every table with a project_id
	// (the audit log excepted: it outlives what it records), its own row,
	// spans (every version, no FINAL) and queued stream messages.
	left := func(id uuid.UUID) map[string]int {
		out := map[string]int{}
		rows, err := pool.Query(ctx, `SELECT c.table_name::text FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND c.column_name = 'project_id' AND t.table_type = 'BASE TABLE'
			AND c.table_name <> 'audit_log'`)
		require.NoError(t, err)
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Contains(t, tables, "evaluation_runs")
		require.Contains(t, tables, "api_keys")
		for _, table := range tables {
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` WHERE project_id = $1`, id).Scan(&n))
			if n > 0 {
				out["postgres "+table] = n
			}
		}
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM projects WHERE id = $1`, id).Scan(&n))
		if n > 0 {
			out["postgres projects"] = n
		}
		var spans uint64
		require.NoError(t, ch.QueryRow(ctx, `SELECT count() FROM spans WHERE project_id = ?`, id.String()).Scan(&spans))
		if spans > 0 {
			out["clickhouse spans"] = int(spans)
		}
		for stream, subject := range map[string]string{spanstream.SpanStream: spanstream.SpanSubject(id.String()),
			spanstream.DeadLetterStream: spanstream.DeadLetterSubject(id.String()), evaluation.Stream: evaluation.Subject(id.String())} {
			s, err := js.Stream(ctx, stream)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				continue
			}
			require.NoError(t, err)
			info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
			require.NoError(t, err)
			if m := info.State.Subjects[subject]; m > 0 {
				out["nats "+subject] = int(m)
			}
		}
		return out
	}
	before := left(project)
	for _, want := range []string{"postgres artifacts", "postgres testcases", "postgres evaluation_runs", "postgres api_keys", "postgres projects", "clickhouse spans"} {
		assert.Contains(t, before, want, "the project holds data before: %v", before)
	}
	var bystanderProject uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `SELECT project_id FROM api_keys WHERE prefix = $1`, bystander[:8]).Scan(&bystanderProject))
	other := left(bystanderProject)

	status, body := p.Do(t, "DELETE", "/api/organizations/"+org.String(), "ApiKey "+key, nil)
	require.Less(t, status, 300, string(body))

	assert.Empty(t, left(project), "nothing of the deleted organization's project is left")
	assert.Equal(t, other, left(bystanderProject), "another organization keeps everything")
	status, _ = p.Do(t, "GET", "/api/simple/testsets/query", "ApiKey "+key, nil)
	assert.Equal(t, http.StatusUnauthorized, status, "the key went with its project")

	// The audit log keeps the deletion, with the organization's id.
	var action string
	var target json.RawMessage
	require.NoError(t, pool.QueryRow(ctx, `SELECT action, target FROM audit_log WHERE organization_id = $1 ORDER BY at DESC LIMIT 1`, org).Scan(&action, &target))
	assert.Equal(t, "DELETE /organizations/:id", action)
	assert.JSONEq(t, `{"id":"`+org.String()+`"}`, string(target))
}
