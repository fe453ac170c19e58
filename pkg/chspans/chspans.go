// Package chspans is the ClickHouse span table shared by the writer (which
// inserts) and the tracing service (which reads): its migrations and the one
// insert statement, so both sides agree on the columns.
package chspans

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MigrationsTable records the applied span-schema migrations.
const MigrationsTable = "span_schema_migrations"

// Migrate applies the span schema. Every statement is idempotent, so the
// writer and tracing may both run it at start.
func Migrate(ctx context.Context, cfg chx.Config, log *slog.Logger) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("open span migrations: %w", err)
	}
	return chx.Migrate(ctx, cfg, sub, MigrationsTable, log)
}

// Columns is the column list of every insert: 18.16 needs it named.
const Columns = `project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name,
start_us, end_us, status_code, status_message, session_id, user_id, agent_id,
attributes, attr_keys, attr_values, events, event_names,
links, links_set, link_trace_ids, link_span_ids, link_keys,
refs, ref_keys, ref_ids, ref_slugs, ref_versions, hashes, hash_ids,
created_us, created_by_id, deleted, version, expires`

// Expiry returns the day after which a project's span is dropped.
type Expiry func(projectID string, start time.Time) time.Time

// Insert writes the spans of batches in one ClickHouse insert. It goes
// through PrepareBatch: an inline INSERT ... VALUES over Exec never returns
// on 18.16 with clickhouse-go v2.
func Insert(ctx context.Context, conn driver.Conn, batches []*spanspb.SpanBatch, expiry Expiry) (int, error) {
	b, err := conn.PrepareBatch(ctx, "INSERT INTO spans ("+Columns+")")
	if err != nil {
		return 0, fmt.Errorf("prepare span insert: %w", err)
	}
	defer b.Abort()
	n := 0
	for _, sb := range batches {
		version := uint64(sb.GetReceivedUnixNano())
		for _, s := range sb.GetSpans() {
			if err := appendSpan(b, sb.GetProjectId(), version, s, expiry); err != nil {
				return 0, err
			}
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	if err := b.Send(); err != nil {
		return 0, fmt.Errorf("insert %d spans: %w", n, err)
	}
	return n, nil
}

func appendSpan(b driver.Batch, project string, version uint64, s *spanspb.Span, expiry Expiry) error {
	start := time.UnixMicro(s.GetStartUnixMicro()).UTC()
	exp := expiry(project, start)
	var eventNames []string
	events := make([]map[string]any, 0, len(s.GetEvents()))
	for _, e := range s.GetEvents() {
		eventNames = append(eventNames, e.GetName())
		events = append(events, map[string]any{
			"name":       e.GetName(),
			"timestamp":  FormatTime(e.GetTimeUnixMicro()),
			"attributes": rawOrEmpty(e.GetAttributesJson()),
		})
	}
	n := len(s.GetLinks())
	linkTraces, linkSpans, linkKeys := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	links := make([]map[string]any, 0, n)
	for _, l := range s.GetLinks() {
		linkTraces, linkSpans, linkKeys = append(linkTraces, l.GetTraceId()), append(linkSpans, l.GetSpanId()), append(linkKeys, l.GetKey())
		link := map[string]any{"trace_id": l.GetTraceId(), "span_id": l.GetSpanId()}
		if a := l.GetAttributesJson(); len(a) > 0 {
			link["attributes"] = json.RawMessage(a)
		} else if l.GetKey() != "" {
			link["attributes"] = map[string]string{"key": l.GetKey()}
		}
		links = append(links, link)
	}
	n = len(s.GetReferences())
	refKeys, refIDs, refSlugs, refVersions := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	refs := make([]map[string]any, 0, n)
	for _, r := range s.GetReferences() {
		refKeys, refIDs = append(refKeys, r.GetKey()), append(refIDs, r.GetId())
		refSlugs, refVersions = append(refSlugs, r.GetSlug()), append(refVersions, r.GetVersion())
		ref := map[string]any{"attributes": map[string]string{"key": r.GetKey()}}
		putNonEmpty(ref, "id", r.GetId())
		putNonEmpty(ref, "slug", r.GetSlug())
		putNonEmpty(ref, "version", r.GetVersion())
		refs = append(refs, ref)
	}
	hashIDs := make([]string, 0, len(s.GetHashes()))
	hashes := make([]map[string]any, 0, len(s.GetHashes()))
	for _, h := range s.GetHashes() {
		hashIDs = append(hashIDs, h.GetId())
		hashes = append(hashes, map[string]any{"id": h.GetId(), "attributes": map[string]string{"key": h.GetKey()}})
	}
	attrs := s.GetAttributesJson()
	if len(attrs) == 0 {
		attrs = []byte("{}")
	}
	err := b.Append(
		project, s.GetTraceId(), s.GetSpanId(), s.GetParentId(), s.GetTraceType(), s.GetSpanType(), s.GetSpanKind(), s.GetSpanName(),
		s.GetStartUnixMicro(), s.GetEndUnixMicro(), s.GetStatusCode(), s.GetStatusMessage(), s.GetSessionId(), s.GetUserId(), s.GetAgentId(),
		string(attrs), nonNil(s.GetAttrKeys()), nonNil(s.GetAttrValues()), jsonOrEmpty(events), nonNil(eventNames),
		jsonOrEmpty(links), boolByte(s.GetLinksSet()), linkTraces, linkSpans, linkKeys,
		jsonOrEmpty(refs), refKeys, refIDs, refSlugs, refVersions, jsonOrEmpty(hashes), hashIDs,
		s.GetCreatedUnixMicro(), s.GetCreatedById(), boolByte(s.GetDeleted()), version, exp,
	)
	if err != nil {
		return fmt.Errorf("append span %s/%s: %w", s.GetTraceId(), s.GetSpanId(), err)
	}
	return nil
}

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
