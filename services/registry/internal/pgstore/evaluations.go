package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
)

// Evaluations is the evaluation records' store (runs, scenarios, results,
// metrics, queues); it shares the registry's pool. Bulk writes are one
// statement each, their rows sent as one JSON array read by
// jsonb_to_recordset.
type Evaluations struct{ pool db }

// Evaluations returns the records' store over s's pool (or transaction).
func (s *Store) Evaluations() *Evaluations { return &Evaluations{pool: s.pool} }

var _ ev.Store = (*Evaluations)(nil)

// InTx runs fn in a transaction (a savepoint inside one). A deadlock or
// serialization failure (two writers locking shared rows in opposite
// orders, say a scenario delete and a result write on it) is a 503 the
// client may retry, not a 500: nothing was written.
func (e *Evaluations) InTx(ctx context.Context, fn func(ev.Store) error) error {
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error { return fn(&Evaluations{pool: tx}) })
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		return &errs.Error{Kind: errs.Unavailable, Code: "evaluations.retry",
			Msg: "The write met a concurrent one on the same records and was rolled back; retry it.", Err: err}
	}
	return err
}

const evLifecycleCols = `created_at, updated_at, deleted_at, created_by_id::text, updated_by_id::text, deleted_by_id::text`

func evLifecycleDest(l *ev.Lifecycle) []any {
	return []any{&l.CreatedAt, &l.UpdatedAt, &l.DeletedAt, &l.CreatedByID, &l.UpdatedByID, &l.DeletedByID}
}

// tableOf is each kind's table.
var tableOf = map[ev.Kind]string{
	ev.KindRun: "evaluation_runs", ev.KindScenario: "evaluation_scenarios", ev.KindResult: "evaluation_results",
	ev.KindMetric: "evaluation_metrics", ev.KindQueue: "evaluation_queues",
}

// columnsOf are the filterable columns each kind has; a filter field a
// kind has no column for is ignored here (the service never sets one).
var columnsOf = map[ev.Kind]map[string]bool{
	ev.KindRun:      {"name": true, "description": true, "references": true},
	ev.KindScenario: {"run_id": true, "ts": true, "interval_min": true},
	ev.KindResult: {"run_id": true, "scenario_id": true, "step_key": true, "repeat_idx": true, "trace_id": true,
		"testcase_id": true, "hash_id": true, "ts": true, "interval_min": true},
	ev.KindMetric: {"run_id": true, "scenario_id": true, "ts": true, "interval_min": true},
	ev.KindQueue:  {"run_id": true, "name": true, "description": true, "is_default": true, "deleted_at": true},
}

func pgUUIDs(ids []uuid.UUID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	return out
}

// evWhere builds the WHERE clause, order and limit of a records query.
func evWhere(p uuid.UUID, k ev.Kind, f ev.Filter) (string, []any) {
	w := &where{conds: []string{"t.project_id = $1"}, args: []any{p}}
	has := columnsOf[k]
	if f.IDs != nil {
		w.add("t.id = ANY(" + w.arg(pgUUIDs(f.IDs)) + ")")
	}
	if f.RunIDs != nil && has["run_id"] {
		w.add("t.run_id = ANY(" + w.arg(pgUUIDs(f.RunIDs)) + ")")
	}
	if f.ScenarioIDs != nil && has["scenario_id"] {
		w.add("t.scenario_id = ANY(" + w.arg(pgUUIDs(f.ScenarioIDs)) + ")")
	}
	if f.HasScenario != nil && has["scenario_id"] {
		w.add("t.scenario_id IS " + notIf(*f.HasScenario) + "NULL")
	}
	if f.HasTimestamp != nil && has["ts"] {
		w.add("t.ts IS " + notIf(*f.HasTimestamp) + "NULL")
	}
	if f.StepKeys != nil && has["step_key"] {
		w.add("t.step_key = ANY(" + w.arg(f.StepKeys) + ")")
	}
	if f.RepeatIdxs != nil && has["repeat_idx"] {
		w.add("t.repeat_idx = ANY(" + w.arg(f.RepeatIdxs) + ")")
	}
	if f.Statuses != nil {
		st := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			st[i] = string(s)
		}
		w.add("t.status = ANY(" + w.arg(st) + ")")
	}
	if f.TraceIDs != nil && has["trace_id"] {
		w.add("t.trace_id = ANY(" + w.arg(f.TraceIDs) + ")")
	}
	if f.TestcaseIDs != nil && has["testcase_id"] {
		w.add("t.testcase_id = ANY(" + w.arg(pgUUIDs(f.TestcaseIDs)) + ")")
	}
	if f.HashIDs != nil && has["hash_id"] {
		w.add("t.hash_id = ANY(" + w.arg(f.HashIDs) + ")")
	}
	if f.Flags != nil {
		w.add("t.flags @> " + w.arg(string(f.Flags)) + "::jsonb")
	}
	if f.Tags != nil {
		w.add("t.tags @> " + w.arg(string(f.Tags)) + "::jsonb")
	}
	if f.Meta != nil {
		w.add("t.meta @> " + w.arg(string(f.Meta)) + "::jsonb")
	}
	if f.References != nil && has["references"] {
		w.add(`t."references" @> ` + w.arg(string(f.References)) + "::jsonb")
	}
	if f.Timestamps != nil && has["ts"] {
		w.add("t.ts = ANY(" + w.arg(f.Timestamps) + ")")
	}
	if f.TimestampFrom != nil && has["ts"] {
		w.add("t.ts >= " + w.arg(*f.TimestampFrom))
	}
	if f.TimestampBefore != nil && has["ts"] {
		w.add("t.ts < " + w.arg(*f.TimestampBefore))
	}
	if f.Intervals != nil && has["interval_min"] {
		w.add("t.interval_min = ANY(" + w.arg(f.Intervals) + ")")
	}
	if f.Name != nil && has["name"] {
		w.add("t.name ILIKE " + w.arg("%"+likeEscape(*f.Name)+"%"))
	}
	if f.Description != nil && has["description"] {
		w.add("t.description ILIKE " + w.arg("%"+likeEscape(*f.Description)+"%"))
	}
	if has["deleted_at"] && !f.IncludeArchived {
		w.add("t.deleted_at IS NULL")
	}
	if f.IsDefault != nil && has["is_default"] {
		w.add("t.is_default = " + w.arg(*f.IsDefault))
	}
	tail := w.window("t", f.Windowing)
	return w.sql() + tail, w.args
}

// notIf is "NOT " when set: a presence filter's IS [NOT] NULL.
func notIf(set bool) string {
	if set {
		return "NOT "
	}
	return ""
}

// asJSON marshals rows for jsonb_to_recordset.
func asJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode rows: %w", err)
	}
	return string(b), nil
}

// raw is a JSON value for a row, null when absent.
func raw(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// ---- runs

const runCols = `t.id::text, t.version, t.name, t.description, t.flags, t.tags, t.meta, t.status, t.data, ` +
	`t.created_at, t.updated_at, t.deleted_at, t.created_by_id::text, t.updated_by_id::text, t.deleted_by_id::text`

func scanRun(row pgx.Row) (*ev.Run, error) {
	var (
		r           ev.Run
		flags, data []byte
	)
	dest := append([]any{&r.ID, &r.Version, &r.Name, &r.Description, &flags, &r.Tags, &r.Meta, &r.Status, &data}, evLifecycleDest(&r.Lifecycle)...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(flags, &r.Flags); err != nil {
		return nil, fmt.Errorf("decode run %s flags: %w", r.ID, err)
	}
	if err := json.Unmarshal(data, &r.Data); err != nil {
		return nil, fmt.Errorf("decode run %s data: %w", r.ID, err)
	}
	return &r, nil
}

// LockRuns locks the runs ids in id order (so two writers locking the
// same runs cannot deadlock) and returns those that exist.
func (e *Evaluations) LockRuns(ctx context.Context, p uuid.UUID, ids []uuid.UUID, exclusive bool) ([]ev.Run, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	mode := "FOR SHARE"
	if exclusive {
		mode = "FOR UPDATE"
	}
	rows, err := e.pool.Query(ctx, `SELECT `+runCols+` FROM evaluation_runs t WHERE t.project_id = $1 AND t.id = ANY($2) ORDER BY t.id `+mode,
		p, pgUUIDs(ids))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanRun)
}

type runRow struct {
	ID          string          `json:"id"`
	Version     string          `json:"version"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Flags       ev.RunFlags     `json:"flags"`
	Tags        json.RawMessage `json:"tags"`
	Meta        json.RawMessage `json:"meta"`
	Status      ev.Status       `json:"status"`
	Data        ev.RunData      `json:"data"`
	Refs        json.RawMessage `json:"refs"`
	CreatedAt   *time.Time      `json:"created_at"`
	CreatedBy   *string         `json:"created_by_id"`
}

// InsertRuns inserts runs in one statement; a taken id is ErrIDTaken.
func (e *Evaluations) InsertRuns(ctx context.Context, p uuid.UUID, runs []ev.Run) error {
	rows := make([]runRow, len(runs))
	for i, r := range runs {
		rows[i] = runRow{ID: r.ID, Version: r.Version, Name: r.Name, Description: r.Description, Flags: r.Flags,
			Tags: raw(r.Tags), Meta: raw(r.Meta), Status: r.Status, Data: r.Data, Refs: ev.References(&r.Data),
			CreatedAt: r.CreatedAt, CreatedBy: r.CreatedByID}
	}
	js, err := asJSON(rows)
	if err != nil {
		return err
	}
	_, err = e.pool.Exec(ctx, `INSERT INTO evaluation_runs (project_id, id, version, name, description, flags, tags, meta, status, data,
		"references", created_at, created_by_id)
		SELECT $1, x.id, x.version, x.name, x.description, x.flags, nullif(x.tags, 'null'), nullif(x.meta, 'null'), x.status, x.data,
			x.refs, coalesce(x.created_at, now()), x.created_by_id
		FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, version text, name text, description text, flags jsonb, tags jsonb, meta jsonb,
			status text, data jsonb, refs jsonb, created_at timestamptz, created_by_id uuid)`, p, js)
	if pgxutil.IsUniqueViolation(err) {
		return ev.ErrIDTaken
	}
	return err
}

// UpdateRun replaces the run's fields besides its creation stamps.
func (e *Evaluations) UpdateRun(ctx context.Context, p uuid.UUID, r ev.Run) (*ev.Run, error) {
	flags, err := json.Marshal(r.Flags)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(r.Data)
	if err != nil {
		return nil, err
	}
	out, err := scanRun(e.pool.QueryRow(ctx, `UPDATE evaluation_runs t SET name = $3, description = $4, flags = $5, tags = $6, meta = $7,
		status = $8, data = $9, "references" = $10, updated_at = coalesce($11, now()), updated_by_id = $12
		WHERE t.project_id = $1 AND t.id = $2 RETURNING `+runCols,
		p, r.ID, r.Name, r.Description, string(flags), nullJSON(r.Tags), nullJSON(r.Meta), r.Status, string(data),
		string(ev.References(&r.Data)), r.UpdatedAt, r.UpdatedByID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ev.ErrNotFound
	}
	return out, err
}

// nullJSON is v as a jsonb argument, NULL when absent.
func nullJSON(v json.RawMessage) *string {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	s := string(v)
	return &s
}

// Runs returns the runs matching f.
func (e *Evaluations) Runs(ctx context.Context, p uuid.UUID, f ev.Filter) ([]ev.Run, error) {
	cond, args := evWhere(p, ev.KindRun, f)
	rows, err := e.pool.Query(ctx, `SELECT `+runCols+` FROM evaluation_runs t WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanRun)
}

// Delete removes the records of kind with ids; the foreign keys cascade
// to everything under them.
func (e *Evaluations) Delete(ctx context.Context, p uuid.UUID, kind ev.Kind, ids []uuid.UUID) ([]uuid.UUID, error) {
	out := []uuid.UUID{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := e.pool.Query(ctx, `DELETE FROM `+tableOf[kind]+` WHERE project_id = $1 AND id = ANY($2) RETURNING id`, p, pgUUIDs(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ---- scenarios

const scenarioCols = `t.id::text, t.run_id::text, t.status, t.flags, t.tags, t.meta, t.interval_min, t.ts, ` +
	`t.created_at, t.updated_at, t.deleted_at, t.created_by_id::text, t.updated_by_id::text, t.deleted_by_id::text`

func scanScenario(row pgx.Row) (*ev.Scenario, error) {
	var x ev.Scenario
	dest := append([]any{&x.ID, &x.RunID, &x.Status, &x.Flags, &x.Tags, &x.Meta, &x.Interval, &x.Timestamp}, evLifecycleDest(&x.Lifecycle)...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &x, nil
}

type scenarioRow struct {
	ID        string          `json:"id"`
	RunID     string          `json:"run_id"`
	Status    ev.Status       `json:"status"`
	Flags     json.RawMessage `json:"flags"`
	Tags      json.RawMessage `json:"tags"`
	Meta      json.RawMessage `json:"meta"`
	Interval  *int            `json:"interval_min"`
	Timestamp *time.Time      `json:"ts"`
	At        *time.Time      `json:"stamp_at"`
	By        *string         `json:"stamp_by"`
}

func scenarioRows(ss []ev.Scenario, updating bool) (string, error) {
	rows := make([]scenarioRow, len(ss))
	for i, x := range ss {
		rows[i] = scenarioRow{ID: x.ID, RunID: x.RunID, Status: x.Status, Flags: raw(x.Flags), Tags: raw(x.Tags), Meta: raw(x.Meta),
			Interval: x.Interval, Timestamp: x.Timestamp, At: x.CreatedAt, By: x.CreatedByID}
		if updating {
			rows[i].At, rows[i].By = x.UpdatedAt, x.UpdatedByID
		}
	}
	return asJSON(rows)
}

const scenarioRecordset = `jsonb_to_recordset($2::jsonb) AS x(id uuid, run_id uuid, status text, flags jsonb, tags jsonb, meta jsonb,
	interval_min int, ts timestamptz, stamp_at timestamptz, stamp_by uuid)`

// InsertScenarios inserts the scenarios whose id is free (ON CONFLICT DO
// NOTHING) and returns the stored scenario of every id, in input order.
func (e *Evaluations) InsertScenarios(ctx context.Context, p uuid.UUID, ss []ev.Scenario) ([]ev.Scenario, error) {
	if len(ss) == 0 {
		return []ev.Scenario{}, nil
	}
	js, err := scenarioRows(ss, false)
	if err != nil {
		return nil, err
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO evaluation_scenarios (project_id, id, run_id, status, flags, tags, meta, interval_min, ts,
		created_at, created_by_id)
		SELECT $1, x.id, x.run_id, x.status, nullif(x.flags, 'null'), nullif(x.tags, 'null'), nullif(x.meta, 'null'), x.interval_min, x.ts,
			coalesce(x.stamp_at, now()), x.stamp_by
		FROM `+scenarioRecordset+` ON CONFLICT DO NOTHING`, p, js); err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ss))
	for i := range ss {
		ids[i] = uuid.MustParse(ss[i].ID)
	}
	rows, err := e.pool.Query(ctx, `SELECT `+scenarioCols+` FROM evaluation_scenarios t WHERE t.project_id = $1 AND t.id = ANY($2)`, p, pgUUIDs(ids))
	if err != nil {
		return nil, err
	}
	got, err := collect(rows, scanScenario)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]ev.Scenario, len(got))
	for _, x := range got {
		byID[x.ID] = x
	}
	out := make([]ev.Scenario, len(ss))
	for i := range ss {
		out[i] = byID[ss[i].ID]
	}
	return out, nil
}

// UpdateScenarios replaces the scenarios' fields in one statement.
func (e *Evaluations) UpdateScenarios(ctx context.Context, p uuid.UUID, ss []ev.Scenario) ([]ev.Scenario, error) {
	if len(ss) == 0 {
		return []ev.Scenario{}, nil
	}
	js, err := scenarioRows(ss, true)
	if err != nil {
		return nil, err
	}
	rows, err := e.pool.Query(ctx, `UPDATE evaluation_scenarios t SET status = x.status, flags = nullif(x.flags, 'null'),
		tags = nullif(x.tags, 'null'), meta = nullif(x.meta, 'null'), interval_min = x.interval_min, ts = x.ts,
		updated_at = coalesce(x.stamp_at, now()), updated_by_id = x.stamp_by
		FROM `+scenarioRecordset+` WHERE t.project_id = $1 AND t.id = x.id RETURNING `+scenarioCols, p, js)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanScenario)
}

// Scenarios returns the scenarios matching f.
func (e *Evaluations) Scenarios(ctx context.Context, p uuid.UUID, f ev.Filter) ([]ev.Scenario, error) {
	cond, args := evWhere(p, ev.KindScenario, f)
	rows, err := e.pool.Query(ctx, `SELECT `+scenarioCols+` FROM evaluation_scenarios t WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanScenario)
}

type cellRow struct {
	K string `json:"k"`
	R int    `json:"r"`
}

func cellsJSON(cells []ev.Cell) (string, error) {
	rows := make([]cellRow, len(cells))
	for i, c := range cells {
		rows[i] = cellRow{K: c.StepKey, R: c.RepeatIdx}
	}
	return asJSON(rows)
}

// RecomputeScenarios sets each listed scenario's status from its cells in
// one statement, writing only the rows whose status changes: errors when
// a cell failed, pending while an expected cell has no result or one not
// done, cancelled when a cell was cancelled, else success. It locks the
// scenarios in id order first, so two transactions recomputing
// overlapping scenarios queue instead of deadlocking. Its cost is one scan
// of the listed scenarios' cells (the statement it replaced tested every
// scenario of the run against every cell of the run on a table without
// statistics: 2.8 ms per written result on a run of 1,000 scenarios,
// BenchmarkResultWriteBatch).
func (e *Evaluations) RecomputeScenarios(ctx context.Context, p, run uuid.UUID, ids []uuid.UUID, expected []ev.Cell) error {
	if len(ids) == 0 {
		return nil
	}
	return e.recompute(ctx, p, run, pgUUIDs(ids), expected)
}

// RecomputeRun is RecomputeScenarios over every scenario of the run.
func (e *Evaluations) RecomputeRun(ctx context.Context, p, run uuid.UUID, expected []ev.Cell) error {
	return e.recompute(ctx, p, run, nil, expected)
}

// recompute recomputes the run's scenarios ids, all of them when ids is
// nil (sent as NULL), in two statements: one locks the scenarios and
// computes their statuses from one scan of their cells, grouped, with no
// join a planner could turn into a scan per scenario (it did, on tables
// without statistics yet: every write tested each scenario of the run
// against every cell of the run); the other writes the few that change.
// It runs in the caller's transaction, which holds the locks until it
// ends.
func (e *Evaluations) recompute(ctx context.Context, p, run uuid.UUID, ids []pgtype.UUID, expected []ev.Cell) error {
	js, err := cellsJSON(expected)
	if err != nil {
		return err
	}
	rows, err := e.pool.Query(ctx, `WITH locked AS MATERIALIZED (
			SELECT id, status FROM evaluation_scenarios WHERE project_id = $1 AND run_id = $2 AND ($3::uuid[] IS NULL OR id = ANY($3))
			ORDER BY id FOR UPDATE),
		e AS MATERIALIZED (SELECT * FROM jsonb_to_recordset($4::jsonb) AS e(k text, r int)),
		cells AS (
			SELECT id, status AS old, NULL::text AS status, false AS expected FROM locked
			UNION ALL
			SELECT x.scenario_id, NULL, x.status, EXISTS (SELECT 1 FROM e WHERE e.k = x.step_key AND e.r = x.repeat_idx)
			FROM evaluation_results x
			WHERE x.project_id = $1 AND x.run_id = $2 AND ($3::uuid[] IS NULL OR x.scenario_id = ANY($3))),
		calc AS (
			SELECT id, max(old) AS old, CASE
				WHEN bool_or(status IN ('failure', 'errors')) THEN 'errors'
				WHEN count(*) FILTER (WHERE expected AND status NOT IN ('pending', 'queued', 'running')) < (SELECT count(*) FROM e) THEN 'pending'
				WHEN bool_or(status = 'cancelled') THEN 'cancelled'
				ELSE 'success' END AS st
			FROM cells GROUP BY id HAVING count(old) > 0)
		SELECT id, st FROM calc WHERE old <> st`, p, run, ids, js)
	if err != nil {
		return err
	}
	var changed []pgtype.UUID
	var statuses []string
	for rows.Next() {
		var id pgtype.UUID
		var st string
		if err := rows.Scan(&id, &st); err != nil {
			rows.Close()
			return err
		}
		changed, statuses = append(changed, id), append(statuses, st)
	}
	if err := rows.Err(); err != nil || len(changed) == 0 {
		return err
	}
	_, err = e.pool.Exec(ctx, `UPDATE evaluation_scenarios s SET status = u.st, updated_at = now()
		FROM unnest($3::uuid[], $4::text[]) AS u(id, st) WHERE s.project_id = $1 AND s.run_id = $2 AND s.id = u.id`,
		p, run, changed, statuses)
	return err
}

// ---- results

const resultCols = `t.id::text, t.run_id::text, t.scenario_id::text, t.step_key, t.repeat_idx, t.status, t.trace_id, t.testcase_id::text, ` +
	`t.hash_id, t.error, t.interval_min, t.ts, t.flags, t.tags, t.meta, ` +
	`t.created_at, t.updated_at, t.deleted_at, t.created_by_id::text, t.updated_by_id::text, t.deleted_by_id::text`

func scanResult(row pgx.Row) (*ev.Result, error) {
	var x ev.Result
	dest := append([]any{&x.ID, &x.RunID, &x.ScenarioID, &x.StepKey, &x.RepeatIdx, &x.Status, &x.TraceID, &x.TestcaseID,
		&x.HashID, &x.Error, &x.Interval, &x.Timestamp, &x.Flags, &x.Tags, &x.Meta}, evLifecycleDest(&x.Lifecycle)...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &x, nil
}

type resultRow struct {
	ID         string          `json:"id"`
	RunID      string          `json:"run_id"`
	ScenarioID string          `json:"scenario_id"`
	StepKey    string          `json:"step_key"`
	RepeatIdx  int             `json:"repeat_idx"`
	Status     ev.Status       `json:"status"`
	TraceID    *string         `json:"trace_id"`
	TestcaseID *string         `json:"testcase_id"`
	HashID     *string         `json:"hash_id"`
	Error      json.RawMessage `json:"error"`
	Interval   *int            `json:"interval_min"`
	Timestamp  *time.Time      `json:"ts"`
	Flags      json.RawMessage `json:"flags"`
	Tags       json.RawMessage `json:"tags"`
	Meta       json.RawMessage `json:"meta"`
	At         *time.Time      `json:"stamp_at"`
	By         *string         `json:"stamp_by"`
}

// UpsertResults writes the results on their cells in one statement, in
// cell order (as ClaimResults does), so concurrent writers lock the cells
// they share in the same order.
func (e *Evaluations) UpsertResults(ctx context.Context, p uuid.UUID, rs []ev.Result) ([]ev.Result, error) {
	if len(rs) == 0 {
		return []ev.Result{}, nil
	}
	in := rs
	rs = append([]ev.Result(nil), rs...)
	sort.Slice(rs, func(i, j int) bool {
		a, b := &rs[i], &rs[j]
		if a.ScenarioID != b.ScenarioID {
			return a.ScenarioID < b.ScenarioID
		}
		if a.StepKey != b.StepKey {
			return a.StepKey < b.StepKey
		}
		return a.RepeatIdx < b.RepeatIdx
	})
	rows := make([]resultRow, len(rs))
	for i, x := range rs {
		rows[i] = resultRow{ID: x.ID, RunID: x.RunID, ScenarioID: x.ScenarioID, StepKey: x.StepKey, RepeatIdx: x.RepeatIdx,
			Status: x.Status, TraceID: x.TraceID, TestcaseID: x.TestcaseID, HashID: x.HashID, Error: raw(x.Error),
			Interval: x.Interval, Timestamp: x.Timestamp, Flags: raw(x.Flags), Tags: raw(x.Tags), Meta: raw(x.Meta),
			At: x.CreatedAt, By: x.CreatedByID}
	}
	js, err := asJSON(rows)
	if err != nil {
		return nil, err
	}
	q, err := e.pool.Query(ctx, `INSERT INTO evaluation_results AS t (project_id, id, run_id, scenario_id, step_key, repeat_idx, status,
		trace_id, testcase_id, hash_id, error, interval_min, ts, flags, tags, meta, created_at, created_by_id)
		SELECT $1, x.id, x.run_id, x.scenario_id, x.step_key, x.repeat_idx, x.status, x.trace_id, x.testcase_id, x.hash_id,
			nullif(x.error, 'null'), x.interval_min, x.ts, nullif(x.flags, 'null'), nullif(x.tags, 'null'), nullif(x.meta, 'null'),
			coalesce(x.stamp_at, now()), x.stamp_by
		FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, run_id uuid, scenario_id uuid, step_key text, repeat_idx int, status text,
			trace_id text, testcase_id uuid, hash_id text, error jsonb, interval_min int, ts timestamptz, flags jsonb, tags jsonb,
			meta jsonb, stamp_at timestamptz, stamp_by uuid)
		ON CONFLICT (project_id, run_id, scenario_id, step_key, repeat_idx) DO UPDATE SET status = EXCLUDED.status,
			trace_id = EXCLUDED.trace_id, testcase_id = EXCLUDED.testcase_id, hash_id = EXCLUDED.hash_id, error = EXCLUDED.error,
			interval_min = EXCLUDED.interval_min, ts = EXCLUDED.ts, flags = EXCLUDED.flags, tags = EXCLUDED.tags, meta = EXCLUDED.meta,
			claim_until = NULL, updated_at = EXCLUDED.created_at, updated_by_id = EXCLUDED.created_by_id
		RETURNING `+resultCols, p, js)
	if err != nil {
		return nil, err
	}
	got, err := collect(q, scanResult)
	if err != nil {
		return nil, cellWriteErr(err)
	}
	// answer in the caller's order
	type cell struct {
		run, scen, step string
		rep             int
	}
	byCell := make(map[cell]ev.Result, len(got))
	for _, x := range got {
		byCell[cell{x.RunID, x.ScenarioID, x.StepKey, x.RepeatIdx}] = x
	}
	out := make([]ev.Result, 0, len(in))
	for _, x := range in {
		if r, ok := byCell[cell{x.RunID, x.ScenarioID, x.StepKey, x.RepeatIdx}]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// Results returns the results matching f.
func (e *Evaluations) Results(ctx context.Context, p uuid.UUID, f ev.Filter) ([]ev.Result, error) {
	cond, args := evWhere(p, ev.KindResult, f)
	rows, err := e.pool.Query(ctx, `SELECT `+resultCols+` FROM evaluation_results t WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanResult)
}

// ClaimResults is one INSERT … ON CONFLICT DO UPDATE … WHERE: PostgreSQL
// locks each conflicting row and evaluates the WHERE on its latest
// committed version, so of two concurrent claims of a cell exactly one
// updates (or inserts) it and only that one gets the row back. The run is
// read FOR SHARE in the same statement: a closed or inactive run yields no
// rows, and a close waits for the claim. Cells whose scenario is not of
// the run are skipped.
func (e *Evaluations) ClaimResults(ctx context.Context, p uuid.UUID, c ev.Claim) ([]ev.Result, error) {
	rows := make([]map[string]any, len(c.Cells))
	for i, x := range c.Cells {
		rows[i] = map[string]any{"scenario_id": x.ScenarioID, "step_key": x.StepKey, "repeat_idx": x.RepeatIdx}
	}
	js, err := asJSON(rows)
	if err != nil {
		return nil, err
	}
	claim, err := asJSON(map[string]any{"worker": c.Worker, "until": c.Until.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return nil, err
	}
	statuses := make([]string, len(c.Statuses))
	for i, s := range c.Statuses {
		statuses[i] = string(s)
	}
	q, err := e.pool.Query(ctx, `WITH run AS (
			SELECT id FROM evaluation_runs WHERE project_id = $1 AND id = $2
				AND flags @> '{"is_active": true}' AND NOT flags @> '{"is_closed": true}' FOR SHARE),
		c AS (SELECT DISTINCT x.scenario_id, x.step_key, x.repeat_idx
			FROM jsonb_to_recordset($3::jsonb) AS x(scenario_id uuid, step_key text, repeat_idx int)
			JOIN evaluation_scenarios s ON s.project_id = $1 AND s.run_id = $2 AND s.id = x.scenario_id)
		INSERT INTO evaluation_results AS t (project_id, id, run_id, scenario_id, step_key, repeat_idx, status, meta, claim_until,
			created_at, created_by_id)
		SELECT $1, gen_random_uuid(), run.id, c.scenario_id, c.step_key, c.repeat_idx, 'running',
			jsonb_build_object('claim', $4::jsonb), $5, $6, $7
		FROM c, run ORDER BY c.scenario_id, c.step_key COLLATE "C", c.repeat_idx
		ON CONFLICT (project_id, run_id, scenario_id, step_key, repeat_idx) DO UPDATE SET status = 'running',
			meta = coalesce(t.meta, '{}'::jsonb) || jsonb_build_object('claim', $4::jsonb), claim_until = $5,
			updated_at = $6, updated_by_id = $7
		WHERE t.status = 'pending' OR (t.status = 'running' AND t.claim_until < $6) OR t.status = ANY($8) OR $9
		RETURNING `+resultCols,
		p, c.RunID, js, claim, c.Until, time.Now().UTC(), c.UserID, statuses, c.Overwrite)
	if err != nil {
		return nil, err
	}
	return collect(q, scanResult)
}

// RenewClaims locks the worker's running cells in cell order (as claims
// and writes do, so a renewal never deadlocks with them) and moves their
// claim's end.
func (e *Evaluations) RenewClaims(ctx context.Context, p uuid.UUID, c ev.Claim) (int, error) {
	rows := make([]map[string]any, len(c.Cells))
	for i, x := range c.Cells {
		rows[i] = map[string]any{"scenario_id": x.ScenarioID, "step_key": x.StepKey, "repeat_idx": x.RepeatIdx}
	}
	js, err := asJSON(rows)
	if err != nil {
		return 0, err
	}
	tag, err := e.pool.Exec(ctx, `WITH held AS (
			SELECT t.id FROM evaluation_results t
			JOIN jsonb_to_recordset($3::jsonb) AS x(scenario_id uuid, step_key text, repeat_idx int)
				ON t.scenario_id = x.scenario_id AND t.step_key = x.step_key AND t.repeat_idx = x.repeat_idx
			WHERE t.project_id = $1 AND t.run_id = $2 AND t.status = 'running' AND t.meta->'claim'->>'worker' = $4
			ORDER BY t.scenario_id, t.step_key COLLATE "C", t.repeat_idx FOR UPDATE OF t)
		UPDATE evaluation_results t SET claim_until = $5,
			meta = jsonb_set(t.meta, '{claim,until}', to_jsonb($6::text))
		FROM held WHERE t.project_id = $1 AND t.id = held.id AND t.status = 'running' AND t.meta->'claim'->>'worker' = $4`,
		p, c.RunID, js, c.Worker, c.Until, c.Until.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// ResultCounts counts the run's scenarios and results by status.
func (e *Evaluations) ResultCounts(ctx context.Context, p, run uuid.UUID) (ev.Counts, ev.Counts, error) {
	count := func(table string) (ev.Counts, error) {
		rows, err := e.pool.Query(ctx, `SELECT status, count(*) FROM `+table+` WHERE project_id = $1 AND run_id = $2 GROUP BY status`, p, run)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := ev.Counts{}
		for rows.Next() {
			var (
				st string
				n  int
			)
			if err := rows.Scan(&st, &n); err != nil {
				return nil, err
			}
			out[ev.Status(st)] = n
		}
		return out, rows.Err()
	}
	scen, err := count("evaluation_scenarios")
	if err != nil {
		return nil, nil, err
	}
	res, err := count("evaluation_results")
	return scen, res, err
}

// PendingExecutable reports whether any scenario of the run lacks an
// expected cell or has one not yet done.
func (e *Evaluations) PendingExecutable(ctx context.Context, p, run uuid.UUID, expected []ev.Cell) (bool, error) {
	if len(expected) == 0 {
		return false, nil
	}
	js, err := cellsJSON(expected)
	if err != nil {
		return false, err
	}
	var left bool
	err = e.pool.QueryRow(ctx, `SELECT EXISTS (
		SELECT 1 FROM evaluation_scenarios s CROSS JOIN jsonb_to_recordset($3::jsonb) AS e(k text, r int)
		LEFT JOIN evaluation_results x ON x.project_id = $1 AND x.run_id = $2 AND x.scenario_id = s.id AND x.step_key = e.k AND x.repeat_idx = e.r
		WHERE s.project_id = $1 AND s.run_id = $2 AND (x.id IS NULL OR x.status IN ('pending', 'queued', 'running')))`, p, run, js).Scan(&left)
	return left, err
}

// MarkUnrun implements ev.Store. Inserted cells take their scenario's
// timestamp and interval, as the worker's results do.
func (e *Evaluations) MarkUnrun(ctx context.Context, p, run uuid.UUID, expected []ev.Cell, st ev.Status) (int, error) {
	js, err := cellsJSON(expected)
	if err != nil {
		return 0, err
	}
	var n int
	err = e.pool.QueryRow(ctx, `WITH e AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS e(k text, r int)),
		upd AS (
			UPDATE evaluation_results t SET status = $4, claim_until = NULL, updated_at = now()
			WHERE t.project_id = $1 AND t.run_id = $2 AND t.status IN ('pending', 'cancelled') AND t.status <> $4
			RETURNING 1),
		ins AS (
			INSERT INTO evaluation_results (project_id, id, run_id, scenario_id, step_key, repeat_idx, status, interval_min, ts)
			SELECT $1, gen_random_uuid(), $2, s.id, e.k, e.r, $4, s.interval_min, s.ts
			FROM evaluation_scenarios s CROSS JOIN e
			WHERE s.project_id = $1 AND s.run_id = $2 AND NOT EXISTS (SELECT 1 FROM evaluation_results x
				WHERE x.project_id = $1 AND x.run_id = $2 AND x.scenario_id = s.id AND x.step_key = e.k AND x.repeat_idx = e.r)
			ON CONFLICT DO NOTHING
			RETURNING 1)
		SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM ins)`, p, run, js, string(st)).Scan(&n)
	return n, err
}

// CellKeys returns the distinct (step key, repeat) of the run's results
// whose step key is not one of except, ordered, at most limit of them.
func (e *Evaluations) CellKeys(ctx context.Context, p, run uuid.UUID, except []string, limit int) ([]ev.Cell, error) {
	rows, err := e.pool.Query(ctx, `SELECT DISTINCT step_key, repeat_idx FROM evaluation_results
		WHERE project_id = $1 AND run_id = $2 AND NOT step_key = ANY($3) ORDER BY step_key, repeat_idx LIMIT $4`,
		p, run, append([]string{}, except...), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ev.Cell{}
	for rows.Next() {
		var c ev.Cell
		if err := rows.Scan(&c.StepKey, &c.RepeatIdx); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DropSteps deletes the run's cells of the dropped step keys, then the
// scenarios that had a cell of one of droppedInputs and have none of
// keptInputs (their metrics and remaining cells go with them, by the
// foreign keys). Scenarios without any input cell are kept: they are
// what a client creates before writing its first cell.
func (e *Evaluations) DropSteps(ctx context.Context, p, run uuid.UUID, dropped, droppedInputs, keptInputs []string) (cells, scenarios int, err error) {
	if len(dropped) == 0 {
		return 0, 0, nil
	}
	if len(droppedInputs) > 0 {
		// Before the cells go: which scenarios the dropped inputs fed.
		tag, err := e.pool.Exec(ctx, `DELETE FROM evaluation_scenarios s WHERE s.project_id = $1 AND s.run_id = $2
			AND EXISTS (SELECT 1 FROM evaluation_results x WHERE x.project_id = $1 AND x.run_id = $2 AND x.scenario_id = s.id
				AND x.step_key = ANY($3))
			AND NOT EXISTS (SELECT 1 FROM evaluation_results x WHERE x.project_id = $1 AND x.run_id = $2 AND x.scenario_id = s.id
				AND x.step_key = ANY($4))`, p, run, droppedInputs, append([]string{}, keptInputs...))
		if err != nil {
			return 0, 0, err
		}
		scenarios = int(tag.RowsAffected())
	}
	tag, err := e.pool.Exec(ctx, `DELETE FROM evaluation_results WHERE project_id = $1 AND run_id = $2 AND step_key = ANY($3)`,
		p, run, dropped)
	if err != nil {
		return 0, 0, err
	}
	return int(tag.RowsAffected()), scenarios, nil
}

// ---- metrics

const metricCols = `t.id::text, t.run_id::text, t.scenario_id::text, t.ts, t.interval_min, t.status, t.data, t.flags, t.tags, t.meta, ` +
	`t.created_at, t.updated_at, t.deleted_at, t.created_by_id::text, t.updated_by_id::text, t.deleted_by_id::text`

func scanMetric(row pgx.Row) (*ev.Metric, error) {
	var x ev.Metric
	dest := append([]any{&x.ID, &x.RunID, &x.ScenarioID, &x.Timestamp, &x.Interval, &x.Status, &x.Data, &x.Flags, &x.Tags, &x.Meta},
		evLifecycleDest(&x.Lifecycle)...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &x, nil
}

type metricRow struct {
	ID         string          `json:"id"`
	RunID      string          `json:"run_id"`
	ScenarioID *string         `json:"scenario_id"`
	Timestamp  *time.Time      `json:"ts"`
	Interval   *int            `json:"interval_min"`
	Status     ev.Status       `json:"status"`
	Data       json.RawMessage `json:"data"`
	Flags      json.RawMessage `json:"flags"`
	Tags       json.RawMessage `json:"tags"`
	Meta       json.RawMessage `json:"meta"`
	At         *time.Time      `json:"stamp_at"`
	By         *string         `json:"stamp_by"`
}

// metricTargets are the three shapes' conflict targets (their partial
// unique indexes) and the rows that belong to each.
var metricTargets = []struct {
	target string
	is     func(m *ev.Metric) bool
}{
	{"(project_id, run_id) WHERE scenario_id IS NULL AND ts IS NULL", func(m *ev.Metric) bool { return m.ScenarioID == nil && m.Timestamp == nil }},
	{"(project_id, run_id, scenario_id) WHERE scenario_id IS NOT NULL", func(m *ev.Metric) bool { return m.ScenarioID != nil }},
	{"(project_id, run_id, ts) WHERE ts IS NOT NULL AND scenario_id IS NULL", func(m *ev.Metric) bool { return m.ScenarioID == nil && m.Timestamp != nil }},
}

// UpsertMetrics writes the metrics with one statement per shape present.
func (e *Evaluations) UpsertMetrics(ctx context.Context, p uuid.UUID, ms []ev.Metric) ([]ev.Metric, error) {
	out := []ev.Metric{}
	for _, t := range metricTargets {
		var rows []metricRow
		for i := range ms {
			m := &ms[i]
			if !t.is(m) {
				continue
			}
			rows = append(rows, metricRow{ID: m.ID, RunID: m.RunID, ScenarioID: m.ScenarioID, Timestamp: m.Timestamp, Interval: m.Interval,
				Status: m.Status, Data: raw(m.Data), Flags: raw(m.Flags), Tags: raw(m.Tags), Meta: raw(m.Meta), At: m.CreatedAt, By: m.CreatedByID})
		}
		if len(rows) == 0 {
			continue
		}
		js, err := asJSON(rows)
		if err != nil {
			return nil, err
		}
		q, err := e.pool.Query(ctx, `INSERT INTO evaluation_metrics AS t (project_id, id, run_id, scenario_id, ts, interval_min, status, data,
			flags, tags, meta, created_at, created_by_id)
			SELECT $1, x.id, x.run_id, x.scenario_id, x.ts, x.interval_min, x.status, nullif(x.data, 'null'), nullif(x.flags, 'null'),
				nullif(x.tags, 'null'), nullif(x.meta, 'null'), coalesce(x.stamp_at, now()), x.stamp_by
			FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, run_id uuid, scenario_id uuid, ts timestamptz, interval_min int, status text,
				data jsonb, flags jsonb, tags jsonb, meta jsonb, stamp_at timestamptz, stamp_by uuid)
			ON CONFLICT `+t.target+` DO UPDATE SET interval_min = EXCLUDED.interval_min, status = EXCLUDED.status, data = EXCLUDED.data,
				flags = EXCLUDED.flags, tags = EXCLUDED.tags, meta = EXCLUDED.meta, updated_at = EXCLUDED.created_at,
				updated_by_id = EXCLUDED.created_by_id
			RETURNING `+metricCols, p, js)
		if err != nil {
			return nil, err
		}
		got, err := collect(q, scanMetric)
		if err != nil {
			return nil, cellWriteErr(err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// Metrics returns the metrics matching f.
func (e *Evaluations) Metrics(ctx context.Context, p uuid.UUID, f ev.Filter) ([]ev.Metric, error) {
	cond, args := evWhere(p, ev.KindMetric, f)
	rows, err := e.pool.Query(ctx, `SELECT `+metricCols+` FROM evaluation_metrics t WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanMetric)
}

// ScenarioMetricData reads the run's per-scenario metric data alone, as
// text: a comparison decodes it itself, so neither the other fifteen
// columns nor pgx's validating JSON scan are paid for on every scenario
// (the metrics were the longest of a comparison's reads).
func (e *Evaluations) ScenarioMetricData(ctx context.Context, p, run uuid.UUID, limit int) ([]ev.ScenarioData, error) {
	rows, err := e.pool.Query(ctx, `SELECT scenario_id::text, data::text FROM evaluation_metrics
		WHERE project_id = $1 AND run_id = $2 AND scenario_id IS NOT NULL AND deleted_at IS NULL LIMIT $3`, p, run, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ev.ScenarioData{}
	for rows.Next() {
		var d ev.ScenarioData
		if err := rows.Scan(&d.ScenarioID, &d.Data); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// MetricKeys reads the keys in the database (jsonb_each over each
// metric's {step: {path: stats}}), so an export's header needs no pass over
// every metric's data in Go: on a run of thousands of scenarios that pass
// was most of the wait for the first row. The conditions are
// evalreports.scenarioValue's; the CASEs keep a malformed record from
// failing the query (it gives no key).
func (e *Evaluations) MetricKeys(ctx context.Context, p, run uuid.UUID, limit int) ([][2]string, error) {
	rows, err := e.pool.Query(ctx, `SELECT DISTINCT s.key COLLATE "C", m.key COLLATE "C" FROM evaluation_metrics t
		CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(t.data) = 'object' THEN t.data ELSE '{}'::jsonb END) s
		CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.value) = 'object' THEN s.value ELSE '{}'::jsonb END) m
		WHERE t.project_id = $1 AND t.run_id = $2 AND t.scenario_id IS NOT NULL AND (
			(m.value->>'type' IN ('numeric/continuous', 'numeric/discrete') AND jsonb_typeof(m.value->'mean') = 'number')
			OR (m.value->>'type' = 'binary' AND (SELECT sum((f->>'count')::float8)
				FROM jsonb_array_elements(CASE WHEN jsonb_typeof(m.value->'freq') = 'array' THEN m.value->'freq' ELSE '[]'::jsonb END) f
				WHERE jsonb_typeof(f->'count') = 'number') > 0))
		ORDER BY 1, 2 LIMIT $3`, p, run, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := [][2]string{}
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// ---- queues

const queueCols = `t.id::text, t.run_id::text, t.name, t.description, t.flags, t.status, t.data, t.tags, t.meta, ` +
	`t.created_at, t.updated_at, t.deleted_at, t.created_by_id::text, t.updated_by_id::text, t.deleted_by_id::text`

func scanQueue(row pgx.Row) (*ev.Queue, error) {
	var (
		q           ev.Queue
		flags, data []byte
	)
	dest := append([]any{&q.ID, &q.RunID, &q.Name, &q.Description, &flags, &q.Status, &data, &q.Tags, &q.Meta}, evLifecycleDest(&q.Lifecycle)...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(flags, &q.Flags); err != nil {
		return nil, fmt.Errorf("decode queue %s flags: %w", q.ID, err)
	}
	if err := json.Unmarshal(data, &q.Data); err != nil {
		return nil, fmt.Errorf("decode queue %s data: %w", q.ID, err)
	}
	return &q, nil
}

// InsertQueue inserts q; is_default mirrors q.Flags.IsDefault for the
// one-default-per-run index.
func (e *Evaluations) InsertQueue(ctx context.Context, p uuid.UUID, q ev.Queue) error {
	flags, _ := json.Marshal(q.Flags)
	data, _ := json.Marshal(q.Data)
	_, err := e.pool.Exec(ctx, `INSERT INTO evaluation_queues (project_id, id, run_id, name, description, is_default, flags, status, data,
		tags, meta, created_at, created_by_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, coalesce($12, now()), $13)`,
		p, q.ID, q.RunID, q.Name, q.Description, q.Flags.IsDefault, string(flags), q.Status, string(data), nullJSON(q.Tags), nullJSON(q.Meta),
		q.CreatedAt, q.CreatedByID)
	if pgxutil.IsUniqueViolation(err) {
		if strings.Contains(err.Error(), "evaluation_queues_default") {
			return ev.ErrDefaultTaken
		}
		return ev.ErrIDTaken
	}
	return err
}

// UpdateQueue replaces q's fields besides its run and creation stamps.
func (e *Evaluations) UpdateQueue(ctx context.Context, p uuid.UUID, q ev.Queue) (*ev.Queue, error) {
	flags, _ := json.Marshal(q.Flags)
	data, _ := json.Marshal(q.Data)
	out, err := scanQueue(e.pool.QueryRow(ctx, `UPDATE evaluation_queues t SET name = $3, description = $4, is_default = $5, flags = $6,
		status = $7, data = $8, tags = $9, meta = $10, deleted_at = $11, deleted_by_id = $12, updated_at = coalesce($13, now()),
		updated_by_id = $14 WHERE t.project_id = $1 AND t.id = $2 RETURNING `+queueCols,
		p, q.ID, q.Name, q.Description, q.Flags.IsDefault, string(flags), q.Status, string(data), nullJSON(q.Tags), nullJSON(q.Meta),
		q.DeletedAt, q.DeletedByID, q.UpdatedAt, q.UpdatedByID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, ev.ErrNotFound
	case pgxutil.IsUniqueViolation(err):
		return nil, ev.ErrDefaultTaken
	}
	return out, err
}

// Queues returns the queues matching f.
func (e *Evaluations) Queues(ctx context.Context, p uuid.UUID, f ev.Filter) ([]ev.Queue, error) {
	cond, args := evWhere(p, ev.KindQueue, f)
	rows, err := e.pool.Query(ctx, `SELECT `+queueCols+` FROM evaluation_queues t WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanQueue)
}

// DefaultQueue returns the run's default queue, archived or not.
func (e *Evaluations) DefaultQueue(ctx context.Context, p, run uuid.UUID) (*ev.Queue, error) {
	q, err := scanQueue(e.pool.QueryRow(ctx, `SELECT `+queueCols+` FROM evaluation_queues t
		WHERE t.project_id = $1 AND t.run_id = $2 AND t.is_default`, p, run))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ev.ErrNotFound
	}
	return q, err
}

// cellWriteErr maps what an upsert of results or metrics can break: a
// scenario that is not of the run (its foreign key) and an id already used
// by another cell.
func cellWriteErr(err error) error {
	switch {
	case pgxutil.IsForeignKeyViolation(err):
		return ev.ErrUnknownScenario
	case pgxutil.IsUniqueViolation(err):
		return ev.ErrIDTaken
	}
	return err
}
