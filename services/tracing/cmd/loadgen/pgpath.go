package main

// The compatible platform's span path, re-created on this machine so the
// ratio load.sh prints is measured on the same cores in the same run
// (docs/benchmarks.md). What it keeps of the compatible platform's storage
// path:
//
//   - the spans table: the same columns (uuids, enums, varchars,
//     timestamptz, five JSONB columns, lifecycle columns), the primary key
//     and the 17 other indexes (B-tree, GIN, jsonb_path_ops, two full-text,
//     the unique root per trace, the retention index), autovacuum at 0.02 /
//     0.01;
//   - the write pattern: groups of 50 spans, each group one transaction of
//     per-span INSERT … ON CONFLICT (project_id, trace_id, span_id) DO
//     UPDATE of every column but the keys and created_*, one statement per
//     round trip (prepared, as its driver does), 2 writers;
//   - the rows: loadgen's own request (-batch spans of the -corpus: for
//     the realistic one several traces, each with its root; for the fixed
//     one a single trace of one repeated ~1.1 KB span) normalised by our
//     normaliser, so the attributes JSONB holds what ours stores.
//
// What it leaves out is in its favour: the router's Redis XADD and the
// worker's XREADGROUP (a round trip and a zlib/orjson decode per span), and
// the EE quota check. It runs in a private database that it creates and
// drops, in the PostgreSQL of scripts/deps.sh.

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

var (
	pgURL     = flag.String("pg", "", "instead of a load: run the compatible platform's span path (per-row upserts into an 18-index PostgreSQL table) against this PostgreSQL server URL for -duration; a private database is created and dropped")
	pgWriters = flag.Int("pg-writers", 2, "concurrent writers, with -pg")
	pgGroup   = flag.Int("pg-group", 50, "spans per transaction, with -pg")
)

// pgSchema is the compatible platform's span table: columns, primary key
// and 17 more indexes (18 in all).
var pgSchema = []string{
	`CREATE TYPE tracetype AS ENUM ('invocation', 'annotation', 'unknown')`,
	`CREATE TYPE spantype AS ENUM ('agent', 'chain', 'workflow', 'task', 'tool', 'embedding', 'query', 'llm', 'completion', 'chat', 'rerank', 'unknown')`,
	`CREATE TYPE spankind AS ENUM ('SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER')`,
	`CREATE TYPE statuscode AS ENUM ('STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR')`,
	`CREATE TABLE spans (
		project_id uuid NOT NULL, trace_id uuid NOT NULL, span_id uuid NOT NULL, parent_id uuid,
		trace_type tracetype, span_type spantype, span_kind spankind NOT NULL, status_code statuscode NOT NULL,
		span_name varchar NOT NULL, status_message varchar, session_id varchar, user_id varchar, agent_id varchar,
		start_time timestamptz NOT NULL, end_time timestamptz NOT NULL,
		attributes jsonb, "references" jsonb, links jsonb, hashes jsonb, events jsonb,
		created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz, deleted_at timestamptz,
		created_by_id uuid NOT NULL, updated_by_id uuid, deleted_by_id uuid,
		PRIMARY KEY (project_id, trace_id, span_id)
	) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.01)`,
	`CREATE INDEX ix_spans_project ON spans (project_id)`,
	`CREATE INDEX ix_spans_project_trace ON spans (project_id, trace_id)`,
	`CREATE INDEX ix_spans_project_span ON spans (project_id, span_id)`,
	`CREATE INDEX ix_spans_project_start ON spans (project_id, start_time)`,
	`CREATE INDEX ix_spans_project_session ON spans (project_id, session_id)`,
	`CREATE INDEX ix_spans_project_trace_type ON spans (project_id, trace_type)`,
	`CREATE INDEX ix_spans_project_span_type ON spans (project_id, span_type)`,
	`CREATE INDEX ix_spans_project_trace_created ON spans (project_id, trace_id, created_at DESC)`,
	`CREATE INDEX ix_spans_attributes ON spans USING gin (attributes)`,
	`CREATE INDEX ix_spans_references ON spans USING gin ("references" jsonb_path_ops)`,
	`CREATE INDEX ix_spans_links ON spans USING gin (links jsonb_path_ops)`,
	`CREATE INDEX ix_spans_hashes ON spans USING gin (hashes jsonb_path_ops)`,
	`CREATE INDEX ix_spans_events ON spans USING gin (events jsonb_path_ops)`,
	`CREATE INDEX ix_spans_attributes_fts ON spans USING gin (to_tsvector('simple', attributes))`,
	`CREATE INDEX ix_spans_events_fts ON spans USING gin (to_tsvector('simple', events))`,
	`CREATE UNIQUE INDEX ux_spans_root ON spans (project_id, trace_id) WHERE parent_id IS NULL`,
	`CREATE INDEX ix_spans_retention ON spans (project_id, created_at, trace_id) WHERE parent_id IS NULL`,
}

const pgUpsert = `INSERT INTO spans (project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, status_code,
	span_name, status_message, session_id, user_id, agent_id, start_time, end_time,
	attributes, "references", links, hashes, events, created_by_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
ON CONFLICT (project_id, trace_id, span_id) DO UPDATE SET
	parent_id = excluded.parent_id, trace_type = excluded.trace_type, span_type = excluded.span_type,
	span_kind = excluded.span_kind, status_code = excluded.status_code, span_name = excluded.span_name,
	status_message = excluded.status_message, session_id = excluded.session_id, user_id = excluded.user_id,
	agent_id = excluded.agent_id, start_time = excluded.start_time, end_time = excluded.end_time,
	attributes = excluded.attributes, "references" = excluded."references", links = excluded.links,
	hashes = excluded.hashes, events = excluded.events,
	updated_at = now(), updated_by_id = excluded.created_by_id`

// pgRow is one span as the compatible platform's worker binds it.
type pgRow struct {
	parentID            *uuid.UUID
	traceType, spanType *string
	kind, status, name  string
	start, end          time.Time
	attributes, events  []byte
	references, links   []byte
	hashes              []byte
	statusMsg, session  *string
	user, agent         *string
	spanIDHex           string
	traceK              uint16 // the trace's index in the request (bytes 6-7 of its id)
}

// pgPath runs the path for dur and prints spans/s and bytes per span.
func pgPath(server string, dur time.Duration, spansPerTrace, writers, group int) {
	ctx := context.Background()
	u, err := url.Parse(server)
	if err != nil {
		log.Fatal(err)
	}
	rows := pgRows(spansPerTrace)
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		log.Fatal(err)
	}
	defer admin.Close(ctx)
	db := fmt.Sprintf("bench_pgpath_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		log.Fatal(err)
	}
	drop := func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
			log.Print(err)
		}
	}
	defer drop()
	// fail drops the private database before exiting (log.Fatal skips
	// deferred calls).
	fail := func(err error) {
		drop()
		log.Fatal(err)
	}
	u.Path = "/" + db
	dsn := u.String()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		fail(err)
	}
	for _, ddl := range pgSchema {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			fail(fmt.Errorf("%s: %v", ddl[:min(len(ddl), 60)], err))
		}
	}
	var indexes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'spans'`).Scan(&indexes); err != nil {
		fail(err)
	}
	project, creator := uuid.New(), uuid.New()

	var stored atomic.Int64
	var traceSeq atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(dur)
	start := time.Now()
	for w := 0; w < writers; w++ {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(ctx)
			for time.Now().Before(deadline) {
				// One loadgen request of spansPerTrace spans (its traces
				// numbered t), written in groups of `group` spans, one
				// transaction each.
				t := traceSeq.Add(1)
				for off := 0; off < len(rows) && time.Now().Before(deadline); off += group {
					n, err := pgTx(ctx, c, project, creator, uint64(t), rows[off:min(off+group, len(rows))])
					if err != nil {
						fail(fmt.Errorf("pg path: %v", err))
					}
					stored.Add(int64(n))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var count, total int64
	if err := conn.QueryRow(ctx, `SELECT count(*), pg_total_relation_size('spans') FROM spans`).Scan(&count, &total); err != nil {
		fail(err)
	}
	conn.Close(ctx)
	if count != stored.Load() {
		fail(fmt.Errorf("pg path: %d spans committed but %d rows in the table", stored.Load(), count))
	}
	fmt.Printf("pg path: %d writers, %d-span transactions of per-row upserts, %d indexes, %s\n", writers, group, indexes, pgVersion(admin))
	fmt.Printf("pg path: %d spans stored in %.1fs\n", count, elapsed.Seconds())
	fmt.Printf("pg path: %.0f spans/s\n", float64(count)/elapsed.Seconds())
	if count > 0 {
		fmt.Printf("pg path: %.0f bytes/span on disk (pg_total_relation_size incl. indexes and TOAST / rows)\n", float64(total)/float64(count))
	}
}

func pgVersion(c *pgx.Conn) string {
	var v string
	_ = c.QueryRow(context.Background(), "SHOW server_version").Scan(&v)
	return "PostgreSQL " + strings.Fields(v + " ?")[0]
}

// pgTx writes one group as the compatible platform's worker does: one
// transaction, one upsert round trip per span.
func pgTx(ctx context.Context, c *pgx.Conn, project, creator uuid.UUID, t uint64, rows []pgRow) (int, error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, r := range rows {
		var traceID uuid.UUID
		binary.BigEndian.PutUint16(traceID[6:], r.traceK)
		binary.BigEndian.PutUint64(traceID[8:], t)
		spanID, err := uuid.Parse(r.spanIDHex + r.spanIDHex)
		if err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, pgUpsert, project, traceID, spanID, r.parentID, r.traceType, r.spanType, r.kind, r.status,
			r.name, r.statusMsg, r.session, r.user, r.agent, r.start, r.end,
			r.attributes, r.references, r.links, r.hashes, r.events, creator); err != nil {
			return 0, err
		}
	}
	return len(rows), tx.Commit(ctx)
}

// pgRows normalises one loadgen request of n spans with our normaliser and
// maps each span to the compatible platform's columns. The attributes are
// expanded: that platform stores a repeated long text twice, where our
// stored form points to the first copy.
func pgRows(n int) []pgRow {
	td, err := ingest.DecodeOTLP(request(1, n), false)
	if err != nil {
		log.Fatal(err)
	}
	spans, _ := (&spanmodel.Normalizer{}).Batch(ingest.RawSpans(td))
	now := time.Now()
	out := make([]pgRow, 0, len(spans))
	for _, s := range spans {
		p := chspans.Proto(s, now, "")
		r := pgRow{
			kind: p.SpanKind, status: p.StatusCode, name: p.SpanName,
			start: time.UnixMicro(p.StartUnixMicro), end: time.UnixMicro(p.EndUnixMicro),
			attributes: []byte(chspans.ExpandAttributes(string(p.AttributesJson), p.AttrValues)), spanIDHex: p.SpanId,
			traceType: nonEmpty(p.TraceType), spanType: nonEmpty(p.SpanType),
			statusMsg: nonEmpty(p.StatusMessage), session: nonEmpty(p.SessionId),
			user: nonEmpty(p.UserId), agent: nonEmpty(p.AgentId),
		}
		if k, err := strconv.ParseUint(p.TraceId[12:16], 16, 16); err == nil {
			r.traceK = uint16(k)
		}
		if p.ParentId != "" {
			id, err := uuid.Parse(p.ParentId + p.ParentId)
			if err != nil {
				log.Fatal(err)
			}
			r.parentID = &id
		}
		out = append(out, r)
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
