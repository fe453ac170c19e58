// Package chspans is the ClickHouse span table shared by its producers, the
// writer (which inserts) and the tracing service (which reads): its
// migrations, the encoding of a canonical span into the row that travels to
// the writer (Encode, and the attribute columns' codec: a long text is kept
// once, in attr_values, and pointed to), the one insert statement, and
// ExpandAttributes for readers, so every side agrees on the columns.
package chspans

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// clusterSchema is the span schema on a cluster (cfg.Cluster set).
//
//go:embed cluster.sql
var clusterSchema string

// MigrationsTable records the applied span-schema migrations.
const MigrationsTable = "span_schema_migrations"

// Migrate applies the span schema. Every statement is idempotent, so the
// writer and tracing may both run it at start.
func Migrate(ctx context.Context, cfg chx.Config, log *slog.Logger) error {
	if cfg.Cluster != "" {
		return migrateCluster(ctx, cfg, log)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("open span migrations: %w", err)
	}
	return chx.Migrate(ctx, cfg, sub, MigrationsTable, log)
}

// migrateCluster creates the replicated tables and the Distributed spans
// table ON CLUSTER. The statements are idempotent and each waits for every
// host, so replicas of a service may run them at once; there is no version
// record: cluster.sql is the current schema, whole.
func migrateCluster(ctx context.Context, cfg chx.Config, log *slog.Logger) error {
	opts, err := chx.Options(cfg)
	if err != nil {
		return err
	}
	db := opts.Auth.Database
	if db == "" {
		db = "default"
	}
	conn, err := chx.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	sql := strings.NewReplacer("{cluster}", cfg.Cluster, "{database}", db).Replace(clusterSchema)
	// Comments go first: they may hold a semicolon.
	for _, stmt := range strings.Split(stripComments(sql), ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		// ON CLUSTER answers with a row per host; read them through Query
		// (18.16's answer is not one Exec takes).
		rows, err := conn.Query(ctx, stmt)
		if err != nil {
			return fmt.Errorf("cluster span schema: %w", err)
		}
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("cluster span schema: %w", err)
		}
	}
	log.Info("cluster span schema in place", "cluster", cfg.Cluster, "database", db)
	return nil
}

func stripComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Columns is the column list of every insert: 18.16 needs it named.
const Columns = `project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name,
start_us, end_us, status_code, status_message, session_id, user_id, agent_id,
attributes, attr_keys, attr_values, events, event_names,
links, links_set, link_trace_ids, link_span_ids, link_keys,
refs, ref_keys, ref_ids, ref_slugs, ref_versions, hashes, hash_ids,
created_us, created_by_id, deleted, version, expires`

// Expiry returns the day on which a project's row is dropped, given when
// the row was received: retention counts from ingest time, never from a
// span's own start time, so a span dated years ago (a backfill, a replay) is
// kept as long as one dated today.
type Expiry func(projectID string, received time.Time) time.Time

// Insert writes the spans of batches in one ClickHouse insert. It goes
// through PrepareBatch: an inline INSERT ... VALUES over Exec never returns
// on 18.16 with clickhouse-go v2. The rows are gathered column by column and
// handed to the driver as one slice per column (batch.Column(i).Append),
// which costs a fraction of a per-row Append (no []any per row, no per-value
// type switch).
//
// A row's expiry is expiry(project, the batch's received time), or the
// span's own expires_unix_day when set (a tombstone keeps the expiry of the
// span it replaces). expiry may be nil when every span sets its own.
//
// Nothing of batches is referenced once the rows are in the driver's column
// buffers (which copy them), before the insert is sent: a caller that lets
// go of its batches too frees their memory for the send (the writer does).
func Insert(ctx context.Context, conn driver.Conn, batches []*spanspb.SpanBatch, expiry Expiry) (int, error) {
	b, n, err := prepare(ctx, conn, batches, expiry)
	if err != nil || b == nil {
		return 0, err
	}
	defer b.Abort()
	if err := b.Send(); err != nil {
		return 0, fmt.Errorf("insert %d spans: %w", n, err)
	}
	return n, nil
}

// prepare builds the insert of batches' spans, ready to send (nil when there
// is no span): the writer's own CPU of an insert, which BenchmarkPrepare
// measures. The caller sends or aborts it.
func prepare(ctx context.Context, conn driver.Conn, batches []*spanspb.SpanBatch, expiry Expiry) (driver.Batch, int, error) {
	n := 0
	for _, sb := range batches {
		n += len(sb.GetSpans())
	}
	if n == 0 {
		return nil, 0, nil
	}
	rs := rowsPool.Get().(*[]row)
	defer func() { clear(*rs); *rs = (*rs)[:0]; rowsPool.Put(rs) }()
	for _, sb := range batches {
		var exp time.Time
		if expiry != nil {
			exp = expiry(sb.GetProjectId(), time.Unix(0, sb.GetReceivedUnixNano()).UTC())
		}
		for _, s := range sb.GetSpans() {
			e := exp
			if d := s.GetExpiresUnixDay(); d > 0 {
				e = time.Unix(int64(d)*86400, 0).UTC()
			} else if expiry == nil {
				return nil, 0, fmt.Errorf("span %s/%s has no expiry and no retention applies", s.GetTraceId(), s.GetSpanId())
			}
			*rs = append(*rs, row{sb, s, e})
		}
	}
	// The rows go in the table's order (ORDER BY project_id, trace_id,
	// span_id; ClickHouse compares strings bytewise, as Go does): ClickHouse
	// then finds the block already sorted and writes it as it is, where it
	// would otherwise sort it and copy every column into the new order, a
	// second copy of the insert in fresh memory. On loadgen's realistic rows
	// that was about 30 % of ClickHouse's CPU per row (docs/benchmarks.md,
	// ClickHouse's CPU per inserted row: where it goes).
	slices.SortStableFunc(*rs, func(a, b row) int {
		if c := strings.Compare(a.batch.GetProjectId(), b.batch.GetProjectId()); c != 0 {
			return c
		}
		if c := strings.Compare(a.span.GetTraceId(), b.span.GetTraceId()); c != 0 {
			return c
		}
		return strings.Compare(a.span.GetSpanId(), b.span.GetSpanId())
	})
	c := getCols(n)
	for _, r := range *rs {
		c.add(r.batch.GetProjectId(), uint64(r.batch.GetReceivedUnixNano()), r.span, r.expires)
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO spans ("+Columns+")")
	if err != nil {
		putCols(c)
		return nil, 0, fmt.Errorf("prepare span insert: %w", err)
	}
	err = appendCols(b, c)
	putCols(c) // the rows are copied: drop the views of the batches' buffers
	if err != nil {
		_ = b.Abort()
		return nil, 0, err
	}
	return b, n, nil
}

// appendCols copies c into b's columns. clickhouse-go grows a string
// column's buffer one value at a time and reads a [][]string through
// reflection (an interface value made per string): on the load script's
// rows that was over half of the writer's CPU of an insert (growslice 36 %,
// reflection 14 %, the collector after both). So each string column gets
// its bytes reserved first, and array columns get their rows one at a time
// ([]string has clickhouse-go's path without reflection).
func appendCols(b driver.Batch, c *cols) error {
	cols := b.Columns()
	sc := scratches.Get().(*[]byte)
	defer scratches.Put(sc)
	for i, col := range c.slices() {
		var err error
		switch v := col.(type) {
		case []string:
			reserve(cols[i], textBytes(v), sc)
			err = b.Column(i).Append(v)
		case [][]string:
			if a, ok := cols[i].(*column.Array); ok {
				n := 0
				for _, row := range v {
					n += textBytes(row)
				}
				reserve(a.Base(), n, sc)
			}
			bc := b.Column(i) // a new value per call
			for _, row := range v {
				if err = bc.AppendRow(row); err != nil {
					break
				}
			}
		default:
			err = b.Column(i).Append(col)
		}
		if err != nil {
			return fmt.Errorf("append span column %d: %w", i, err)
		}
	}
	return nil
}

// scratches holds the bytes reserve appends (their content never matters).
var scratches = sync.Pool{New: func() any { return new([]byte) }}

// maxReserve bounds what reserve grows a column to (and the scratch it
// keeps): above it the column grows as clickhouse-go grows it.
const maxReserve = 64 << 20

func textBytes(vals []string) int {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	return n
}

// reserve gives a String column room for n bytes in one allocation: it
// appends one value of n bytes and removes it (Reset keeps the capacity;
// clickhouse-go has no other way to size a column). Other column types are
// left as they are.
func reserve(col column.Interface, n int, scratch *[]byte) {
	s, ok := col.(*column.String)
	if !ok {
		return
	}
	if n < 64<<10 || n > maxReserve {
		return // small: growing is cheap; huge: not worth keeping a scratch
	}
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	if s.AppendRow(unsafe.String(unsafe.SliceData(*scratch), n)) == nil {
		s.Reset()
	}
}

// cols is one insert's rows, column by column, in the order of Columns.
type cols struct {
	project, traceID, spanID, parentID, traceType, spanType, spanKind, spanName []string
	start, end                                                                  []int64
	statusCode, statusMessage, sessionID, userID, agentID                       []string
	attributes                                                                  []string
	attrKeys, attrValues                                                        [][]string
	events                                                                      []string
	eventNames                                                                  [][]string
	links                                                                       []string
	linksSet                                                                    []uint8
	linkTraceIDs, linkSpanIDs, linkKeys                                         [][]string
	refs                                                                        []string
	refKeys, refIDs, refSlugs, refVersions                                      [][]string
	hashes                                                                      []string
	hashIDs                                                                     [][]string
	created                                                                     []int64
	createdBy                                                                   []string
	deleted                                                                     []uint8
	version                                                                     []uint64
	expires                                                                     []time.Time
}

// row is a span of an insert, with what its batch gives it.
type row struct {
	batch   *spanspb.SpanBatch
	span    *spanspb.Span
	expires time.Time
}

var rowsPool = sync.Pool{New: func() any { return new([]row) }}

var colsPool = sync.Pool{New: func() any { return new(cols) }}

func getCols(n int) *cols {
	c := colsPool.Get().(*cols)
	c.reset(n)
	return c
}

func putCols(c *cols) {
	if cap(c.project) > 1<<17 {
		return // an outsized insert: let it go
	}
	c.reset(0) // drop references to the batches' strings
	colsPool.Put(c)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	clear(s)
	return s[:0]
}

func (c *cols) reset(n int) {
	for _, p := range []*[]string{&c.project, &c.traceID, &c.spanID, &c.parentID, &c.traceType, &c.spanType, &c.spanKind, &c.spanName,
		&c.statusCode, &c.statusMessage, &c.sessionID, &c.userID, &c.agentID, &c.attributes, &c.events, &c.links, &c.refs, &c.hashes, &c.createdBy} {
		*p = grow(*p, n)
	}
	for _, p := range []*[][]string{&c.attrKeys, &c.attrValues, &c.eventNames, &c.linkTraceIDs, &c.linkSpanIDs, &c.linkKeys,
		&c.refKeys, &c.refIDs, &c.refSlugs, &c.refVersions, &c.hashIDs} {
		*p = grow(*p, n)
	}
	c.start, c.end, c.created = grow(c.start, n), grow(c.end, n), grow(c.created, n)
	c.linksSet, c.deleted = grow(c.linksSet, n), grow(c.deleted, n)
	c.version, c.expires = grow(c.version, n), grow(c.expires, n)
}

// slices returns the columns in the order of Columns.
func (c *cols) slices() []any {
	return []any{c.project, c.traceID, c.spanID, c.parentID, c.traceType, c.spanType, c.spanKind, c.spanName,
		c.start, c.end, c.statusCode, c.statusMessage, c.sessionID, c.userID, c.agentID,
		c.attributes, c.attrKeys, c.attrValues, c.events, c.eventNames,
		c.links, c.linksSet, c.linkTraceIDs, c.linkSpanIDs, c.linkKeys,
		c.refs, c.refKeys, c.refIDs, c.refSlugs, c.refVersions, c.hashes, c.hashIDs,
		c.created, c.createdBy, c.deleted, c.version, c.expires}
}

var empty = []string{}

func (c *cols) add(project string, version uint64, s *spanspb.Span, exp time.Time) {
	c.project = append(c.project, project)
	c.traceID = append(c.traceID, s.GetTraceId())
	c.spanID = append(c.spanID, s.GetSpanId())
	c.parentID = append(c.parentID, s.GetParentId())
	c.traceType = append(c.traceType, s.GetTraceType())
	c.spanType = append(c.spanType, s.GetSpanType())
	c.spanKind = append(c.spanKind, s.GetSpanKind())
	c.spanName = append(c.spanName, s.GetSpanName())
	c.start = append(c.start, s.GetStartUnixMicro())
	c.end = append(c.end, s.GetEndUnixMicro())
	c.statusCode = append(c.statusCode, s.GetStatusCode())
	c.statusMessage = append(c.statusMessage, s.GetStatusMessage())
	c.sessionID = append(c.sessionID, s.GetSessionId())
	c.userID = append(c.userID, s.GetUserId())
	c.agentID = append(c.agentID, s.GetAgentId())
	attrs := "{}"
	if a := s.GetAttributesJson(); len(a) > 0 {
		attrs = unsafeString(a)
	}
	c.attributes = append(c.attributes, attrs)
	c.attrKeys = append(c.attrKeys, nonNil(s.GetAttrKeys()))
	c.attrValues = append(c.attrValues, nonNil(s.GetAttrValues()))

	var eventNames []string
	events := ""
	if ev := s.GetEvents(); len(ev) > 0 {
		list := make([]map[string]any, 0, len(ev))
		for _, e := range ev {
			eventNames = append(eventNames, e.GetName())
			list = append(list, map[string]any{
				"name":       e.GetName(),
				"timestamp":  FormatTime(e.GetTimeUnixMicro()),
				"attributes": rawOrEmpty(e.GetAttributesJson()),
			})
		}
		events = jsonOrEmpty(list)
	}
	c.events = append(c.events, events)
	c.eventNames = append(c.eventNames, nonNil(eventNames))

	links := ""
	linkTraces, linkSpans, linkKeys := empty, empty, empty
	if ls := s.GetLinks(); len(ls) > 0 {
		n := len(ls)
		linkTraces, linkSpans, linkKeys = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		list := make([]map[string]any, 0, n)
		for _, l := range ls {
			linkTraces, linkSpans, linkKeys = append(linkTraces, l.GetTraceId()), append(linkSpans, l.GetSpanId()), append(linkKeys, l.GetKey())
			link := map[string]any{"trace_id": l.GetTraceId(), "span_id": l.GetSpanId()}
			if a := l.GetAttributesJson(); len(a) > 0 {
				link["attributes"] = json.RawMessage(a)
			} else if l.GetKey() != "" {
				link["attributes"] = map[string]string{"key": l.GetKey()}
			}
			list = append(list, link)
		}
		links = jsonOrEmpty(list)
	}
	c.links = append(c.links, links)
	c.linksSet = append(c.linksSet, boolByte(s.GetLinksSet()))
	c.linkTraceIDs = append(c.linkTraceIDs, linkTraces)
	c.linkSpanIDs = append(c.linkSpanIDs, linkSpans)
	c.linkKeys = append(c.linkKeys, linkKeys)

	refs := ""
	refKeys, refIDs, refSlugs, refVersions := empty, empty, empty, empty
	if rs := s.GetReferences(); len(rs) > 0 {
		n := len(rs)
		refKeys, refIDs, refSlugs, refVersions = make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		list := make([]map[string]any, 0, n)
		for _, r := range rs {
			refKeys, refIDs = append(refKeys, r.GetKey()), append(refIDs, r.GetId())
			refSlugs, refVersions = append(refSlugs, r.GetSlug()), append(refVersions, r.GetVersion())
			ref := map[string]any{"attributes": map[string]string{"key": r.GetKey()}}
			putNonEmpty(ref, "id", r.GetId())
			putNonEmpty(ref, "slug", r.GetSlug())
			putNonEmpty(ref, "version", r.GetVersion())
			list = append(list, ref)
		}
		refs = jsonOrEmpty(list)
	}
	c.refs = append(c.refs, refs)
	c.refKeys = append(c.refKeys, refKeys)
	c.refIDs = append(c.refIDs, refIDs)
	c.refSlugs = append(c.refSlugs, refSlugs)
	c.refVersions = append(c.refVersions, refVersions)

	hashes := ""
	hashIDs := empty
	if hs := s.GetHashes(); len(hs) > 0 {
		hashIDs = make([]string, 0, len(hs))
		list := make([]map[string]any, 0, len(hs))
		for _, h := range hs {
			hashIDs = append(hashIDs, h.GetId())
			list = append(list, map[string]any{"id": h.GetId(), "attributes": map[string]string{"key": h.GetKey()}})
		}
		hashes = jsonOrEmpty(list)
	}
	c.hashes = append(c.hashes, hashes)
	c.hashIDs = append(c.hashIDs, hashIDs)

	c.created = append(c.created, s.GetCreatedUnixMicro())
	c.createdBy = append(c.createdBy, s.GetCreatedById())
	c.deleted = append(c.deleted, boolByte(s.GetDeleted()))
	c.version = append(c.version, version)
	c.expires = append(c.expires, exp)
}

// unsafeString views b as a string without a copy: the batch that owns b
// outlives the insert and is never modified.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// FormatTime renders microseconds since the epoch as ISO 8601 in UTC, the
// way every span time goes back to clients.
func FormatTime(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

func putNonEmpty(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func rawOrEmpty(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func jsonOrEmpty[T any](v []T) string {
	if len(v) == 0 {
		return ""
	}
	b, _ := json.Marshal(v) // maps of strings and raw JSON always marshal
	return string(b)
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
