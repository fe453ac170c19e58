package query

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Row is a stored span as read back.
type Row struct {
	TraceID, SpanID, ParentID               string
	TraceType, SpanType, SpanKind, SpanName string
	StartUS, EndUS                          int64
	StatusCode, StatusMessage               string
	SessionID, UserID, AgentID              string
	Attributes, Events, Links, Refs, Hashes string
	// AttrValues is the row's attr_values when its attributes JSON holds
	// a pointer (chspans.ExpandAttributes reads the long texts there),
	// else empty. decodeRow clears it.
	AttrValues  []string
	LinksSet    uint8
	CreatedUS   int64
	CreatedByID string
	// Expires is the row's expiry day, read by the key lookups only (zero
	// elsewhere): a delete gives it to the tombstone, which then lands in
	// the span's partition.
	Expires time.Time
}

// rowColumns are the columns of Row. attr_values is read only for a row
// whose attributes JSON holds a pointer (chspans.ExpandAttributes: a quote,
// U+FFFF, an escaped NUL), where the long texts are kept
// (docs/decisions/0012-span-text-stored-once.md); a row without one holds
// its whole text in the JSON, as most rows written before did.
const rowColumns = `trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name, start_us, end_us,
status_code, status_message, session_id, user_id, agent_id, attributes,
if(position(attributes, '"\xEF\xBF\xBF\\u0000') > 0, attr_values, emptyArrayString()),
events, links, refs, hashes, links_set, created_us, created_by_id`

// live is the condition every read adds: the project, no tombstones, not
// expired. The table is read with FINAL so only the latest version of a span
// counts, and PREWHERE must not move the tombstone test before the merge.
const live = "project_id = ? AND deleted = 0 AND expires > today()"

// Store reads spans from ClickHouse.
type Store struct {
	conn    driver.Conn
	timeout time.Duration
	limits  Limits
	reads   *Budget
}

// NewStore returns a store whose statements stop after timeout and run
// under limits: DefaultLimits when none is given, and a zero field of the
// given limits takes its default.
func NewStore(conn driver.Conn, timeout time.Duration, limits ...Limits) *Store {
	l := DefaultLimits()
	if len(limits) > 0 {
		l = limits[0].orDefaults()
	}
	return &Store{conn: conn, timeout: timeout, limits: l, reads: NewBudget(l)}
}

// query runs one statement under the store's settings. ClickHouse stops it
// at max_execution_time (whole seconds, at least 1) and answers
// TIMEOUT_EXCEEDED, which names the limit. The statement's context has no
// deadline on purpose: clickhouse-go replaces max_execution_time by a
// context's deadline plus 5 s, so the server would never be the one to
// stop. A watchdog cancels it a little after the limit instead, for a
// server that does not answer at all; the caller's cancellation still
// reaches it. The returned func releases both.
func (s *Store) query(ctx context.Context, op, q string, args ...any) (driver.Rows, func(), error) {
	secs := max(1, int(math.Ceil(s.timeout.Seconds())))
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopParent := context.AfterFunc(ctx, cancel)
	watchdog := time.AfterFunc(time.Duration(secs)*time.Second+2*time.Second, cancel)
	done := func() { watchdog.Stop(); stopParent(); cancel() }
	run = clickhouse.Context(run, clickhouse.WithSettings(s.limits.settings(secs)))
	rows, err := s.conn.Query(run, q, args...)
	if err != nil {
		done()
		return nil, nil, s.storeErr(op, err)
	}
	return rows, done, nil
}

// joinClause is an optional JOIN after "FROM spans FINAL" (the metric roll-up);
// a nil in args stands for the project.
type joinClause struct {
	sql  string
	args []any
}

func (j joinClause) from(project string) (string, []any) {
	args := make([]any, len(j.args))
	for i, a := range j.args {
		if a == nil {
			a = project
		}
		args[i] = a
	}
	return "spans FINAL " + j.sql, args
}

// spansByKey reads spans by key (trace ids, span ids: keyWhere uses only
// trace_id and span_id) without FINAL. FINAL on 18.16 cannot use PREWHERE, so
// it decompresses every column, attributes included, of at least one
// granule (8,192 rows) in every part, and a trace touches a part per day:
// ~0.6 s for one trace. Here the key test is a PREWHERE, only the matching
// rows' columns are read, and the merge FINAL would do (latest version per
// span; tombstones and expired spans hidden) is done on the few rows read.
// limit <= 0 means all.
func (s *Store) spansByKey(ctx context.Context, project, keyWhere string, args []any, order string, limit int) ([]Row, error) {
	rows, _, err := s.spansByKeyVersioned(ctx, project, keyWhere, args, order, limit)
	return rows, err
}

// spansByKeyVersioned is spansByKey that also returns each row's version.
func (s *Store) spansByKeyVersioned(ctx context.Context, project, keyWhere string, args []any, order string, limit int) ([]Row, []uint64, error) {
	// The project is a PREWHERE too (see keysUnmerged).
	q := "SELECT " + rowColumns + ", expires, deleted, expires > today(), version FROM spans PREWHERE project_id = ? AND (" + keyWhere +
		") ORDER BY " + order
	rows, cancel, err := s.query(ctx, "query spans", q, append([]any{project}, args...)...)
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	defer rows.Close()
	type versioned struct {
		row           Row
		deleted, live uint8
		version       uint64
	}
	// Rows are charged to the read as they arrive (a caller that opened
	// none gets one for this statement alone): a read over its budget
	// stops here, before it holds more.
	read := readFrom(ctx)
	if read == nil {
		read = s.reads.Open("")
		defer read.Release()
	}
	var all []versioned
	latest := map[[2]string]int{}
	for rows.Next() {
		var v versioned
		r := &v.row
		if err := rows.Scan(&r.TraceID, &r.SpanID, &r.ParentID, &r.TraceType, &r.SpanType, &r.SpanKind, &r.SpanName,
			&r.StartUS, &r.EndUS, &r.StatusCode, &r.StatusMessage, &r.SessionID, &r.UserID, &r.AgentID,
			&r.Attributes, &r.AttrValues, &r.Events, &r.Links, &r.Refs, &r.Hashes, &r.LinksSet, &r.CreatedUS, &r.CreatedByID,
			&r.Expires, &v.deleted, &v.live, &v.version); err != nil {
			return nil, nil, s.storeErr("read spans", err)
		}
		if err := read.Charge(rowBytes(r)); err != nil {
			return nil, nil, err
		}
		k := [2]string{r.TraceID, r.SpanID}
		// As ReplacingMergeTree: the highest version wins, the last
		// inserted among equals (a redelivery: the same row).
		if i, ok := latest[k]; !ok || v.version >= all[i].version {
			latest[k] = len(all)
		}
		all = append(all, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.storeErr("read spans", err)
	}
	var out []Row
	var versions []uint64
	for i, v := range all {
		if latest[[2]string{v.row.TraceID, v.row.SpanID}] != i || v.deleted != 0 || v.live == 0 {
			continue
		}
		out = append(out, v.row)
		versions = append(versions, v.version)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, versions, nil
}

// traceIDs picks the traces whose spans match, newest (latest span start)
// first, with the windowing's cursor applied to the trace's time.
//
// The group's time is aliased group_us, a name no filter uses: ClickHouse
// substitutes an alias wherever its name appears, lambda parameters
// included, so an alias "t" turned the links filter's (t, s) -> t = ... into
// an aggregate inside WHERE (found by FuzzQueryHTTP).
func (s *Store) traceIDs(ctx context.Context, project string, j joinClause, where string, args []any, having string, havingArgs []any, order string, limit int) ([]string, []int64, error) {
	dir := "DESC"
	if order == "ascending" {
		dir = "ASC"
	}
	from, jargs := j.from(project)
	q := "SELECT trace_id, max(start_us) AS group_us FROM " + from + " WHERE " + live + " AND (" + where + ") GROUP BY trace_id"
	if having != "" {
		q += " HAVING " + having
	}
	q += " ORDER BY group_us " + dir + ", trace_id " + dir
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	all := append(append(append(jargs, project), args...), havingArgs...)
	rows, cancel, err := s.query(ctx, "query traces", q, all...)
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	defer rows.Close()
	var ids []string
	var times []int64
	for rows.Next() {
		var id string
		var t int64
		if err := rows.Scan(&id, &t); err != nil {
			return nil, nil, s.storeErr("read traces", err)
		}
		ids, times = append(ids, id), append(times, t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.storeErr("read traces", err)
	}
	return ids, times, nil
}

// distinct lists the distinct values of a column (session_id, user_id) over
// matching spans with their first (or last) time.
func (s *Store) distinct(ctx context.Context, project, column string, realtime bool, where string, args []any, having string, havingArgs []any, order string, limit int) ([]string, []int64, error) {
	agg := "min(start_us)"
	if realtime {
		agg = "max(start_us)"
	}
	dir := "DESC"
	if order == "ascending" {
		dir = "ASC"
	}
	q := "SELECT " + column + ", " + agg + " AS group_us FROM spans FINAL WHERE " + live + " AND " + column + " != '' AND (" + where + ") GROUP BY " + column
	if having != "" {
		q += " HAVING " + having
	}
	q += " ORDER BY group_us " + dir + ", " + column + " " + dir
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, cancel, err := s.query(ctx, "query "+column, q, append(append([]any{project}, args...), havingArgs...)...)
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	defer rows.Close()
	var ids []string
	var times []int64
	for rows.Next() {
		var id string
		var t int64
		if err := rows.Scan(&id, &t); err != nil {
			return nil, nil, s.storeErr("read "+column, err)
		}
		ids, times = append(ids, id), append(times, t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.storeErr("read "+column, err)
	}
	return ids, times, nil
}

// Parsed is a row with its JSON parts decoded.
type Parsed struct {
	Row
	Attrs map[string]any
}

// parseRows decodes the rows' JSON parts; a part that does not decode is
// marked, never an error (decodeRow).
func parseRows(rows []Row) []Parsed {
	out := make([]Parsed, 0, len(rows))
	for _, r := range rows {
		out = append(out, decodeRow(r))
	}
	return out
}

// inList is "column IN (?, ?, ...)" with one placeholder per value: unlike
// has(?, column), ClickHouse (18.16 too) narrows an IN list of key values
// with the primary index, so a trace by id reads a few granules instead of
// the whole project (seconds at 10M spans). clickhouse-go binds a slice as
// an Array, which IN does not take, hence the placeholders.
func inList(column string, values []string) string {
	if len(values) == 0 {
		return "0"
	}
	return column + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ") + ")"
}

func anys(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// spanKey is a span found by the first phase of a filtered query: its id,
// start and the version the filter matched.
type spanKey struct {
	TraceID, SpanID string
	StartUS         int64
	Version         uint64
}

// keys is the first phase of a filtered span query: the keys of the
// matching spans, in tail's order. It reads with FINAL but only the columns
// the filter and the order name (ids, start, version, the filter's
// columns), not the wide JSON ones, and a window on start_us prunes the
// partitions outside it.
func (s *Store) keys(ctx context.Context, project string, j joinClause, where string, args []any, tail string) ([]spanKey, error) {
	from, all := j.from(project)
	return s.keysFrom(ctx, from, all, project, where, args, tail)
}

// keysUnmerged is keys without FINAL: every stored version that matches,
// each key once per version. On 18.16 FINAL costs ~10× when the filter
// reads the attribute arrays (0.63 s instead of 0.07 s for a day of 333k
// spans); rowsOf then keeps only the keys whose latest version matched.
//
// The project is a PREWHERE: a part's last granule has no upper key bound
// on 18.16 (no final mark), so the primary index selects it for every
// project whose id sorts after the part's last row; with the project
// tested first, another project's rows there are dropped before the
// filter's columns (the attribute arrays) are read. FINAL cannot take a
// PREWHERE on 18.16: FINAL reads (keys, traceIDs, distinct, analytics)
// still read such a granule, at most 1,024 rows of the other project.
func (s *Store) keysUnmerged(ctx context.Context, project, where string, args []any, tail string) ([]spanKey, int, error) {
	keys, err := s.keysFrom(ctx, "spans PREWHERE project_id = ?", []any{project}, project, where, args, tail)
	n := len(keys)
	seen := make(map[spanKey]bool, n)
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, n, err
}

func (s *Store) keysFrom(ctx context.Context, from string, all []any, project, where string, args []any, tail string) ([]spanKey, error) {
	q := "SELECT trace_id, span_id, start_us, version FROM " + from + " WHERE " + live + " AND (" + where + ") " + tail
	all = append(append(all, project), args...)
	rows, cancel, err := s.query(ctx, "query spans", q, all...)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer rows.Close()
	var out []spanKey
	for rows.Next() {
		var k spanKey
		if err := rows.Scan(&k.TraceID, &k.SpanID, &k.StartUS, &k.Version); err != nil {
			return nil, s.storeErr("read spans", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.storeErr("read spans", err)
	}
	return out, nil
}

// rowsOf is the second phase: the full rows of keys, in their order, read
// by key with PREWHERE (spansByKey). The start window of the keys prunes
// partitions: a span keeps its start time across re-ingests and its
// tombstone, so all its versions share its partition. A key whose latest
// version is no longer the one the filter matched (replaced or deleted
// since) is left out.
func (s *Store) rowsOf(ctx context.Context, project string, keys []spanKey) ([]Row, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	traces, spans := make([]string, 0, len(keys)), make([]string, 0, len(keys))
	seenT, seenS := map[string]bool{}, map[string]bool{}
	lo, hi := keys[0].StartUS, keys[0].StartUS
	for _, k := range keys {
		if !seenT[k.TraceID] {
			seenT[k.TraceID] = true
			traces = append(traces, k.TraceID)
		}
		if !seenS[k.SpanID] {
			seenS[k.SpanID] = true
			spans = append(spans, k.SpanID)
		}
		lo, hi = min(lo, k.StartUS), max(hi, k.StartUS)
	}
	where := inList("trace_id", traces) + " AND " + inList("span_id", spans) + " AND start_us >= ? AND start_us <= ?"
	args := append(append(anys(traces), anys(spans)...), lo, hi)
	rows, versions, err := s.spansByKeyVersioned(ctx, project, where, args, "trace_id", 0)
	if err != nil {
		return nil, err
	}
	type at struct {
		i       int
		version uint64
	}
	found := make(map[[2]string]at, len(rows))
	for i, r := range rows {
		found[[2]string{r.TraceID, r.SpanID}] = at{i, versions[i]}
	}
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		if f, ok := found[[2]string{k.TraceID, k.SpanID}]; ok && f.version == k.Version {
			out = append(out, rows[f.i])
		}
	}
	return out, nil
}
