// Package chstore is the writer's ClickHouse side: span inserts and the
// retention schedule that drops expired partitions.
package chstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// RetentionConfig is how long spans are kept. Variables: WRITER_RETENTION_*.
type RetentionConfig struct {
	Default  time.Duration `default:"720h" desc:"how long spans are kept unless the project has its own period"`
	Projects string        `desc:"per-project periods: <project-uuid>=<duration>, comma separated (e.g. 0190…=168h)"`
	Interval time.Duration `default:"1h" desc:"how often expired partitions are dropped"`
}

// Store writes spans to the ClickHouse spans table.
type Store struct {
	conn      driver.Conn
	retention time.Duration
	projects  map[string]time.Duration
	log       *slog.Logger
	now       func() time.Time
	// Cluster, when set, is the ClickHouse cluster of the replicated
	// schema: partitions live in spans_local on every host, and are
	// dropped there ON CLUSTER (spans is a Distributed table, without parts).
	Cluster string
}

// New returns a store; cfg's project list must parse.
func New(conn driver.Conn, cfg RetentionConfig, log *slog.Logger) (*Store, error) {
	projects, err := ParseProjects(cfg.Projects)
	if err != nil {
		return nil, err
	}
	return &Store{conn: conn, retention: cfg.Default, projects: projects, log: log, now: time.Now}, nil
}

// ParseProjects reads "<uuid>=<duration>,..." into a map.
func ParseProjects(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, d, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("retention projects: %q is not <project-uuid>=<duration>", part)
		}
		pid, err := uuid.Parse(strings.TrimSpace(id))
		if err != nil {
			return nil, fmt.Errorf("retention projects: %q: %w", id, err)
		}
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("retention projects: %q is not a positive duration", d)
		}
		out[pid.String()] = dur
	}
	return out, nil
}

// Expiry is the first day on which a span received at received is gone:
// retention counts from ingest time, whatever the span's own start time.
func (s *Store) Expiry(project string, received time.Time) time.Time {
	d, ok := s.projects[project]
	if !ok {
		d = s.retention
	}
	return received.Add(d).UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// Insert writes batches in one insert.
func (s *Store) Insert(ctx context.Context, batches []*spanspb.SpanBatch) (int, error) {
	return chspans.Insert(ctx, s.conn, batches, s.Expiry)
}

// Healthy pings ClickHouse.
func (s *Store) Healthy(ctx context.Context) error { return s.conn.Ping(ctx) }

// DropExpired drops every partition whose expiry day has come; it returns
// the partitions dropped.
func (s *Store) DropExpired(ctx context.Context) ([]string, error) {
	today := s.now().UTC().Format("2006-01-02")
	table, onCluster := "spans", ""
	if s.Cluster != "" {
		table, onCluster = "spans_local", " ON CLUSTER "+s.Cluster
	}
	rows, err := s.conn.Query(ctx, `SELECT DISTINCT partition FROM system.parts
		WHERE database = currentDatabase() AND table = ? AND active`, table)
	if err != nil {
		return nil, fmt.Errorf("list span partitions: %w", err)
	}
	var expired []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list span partitions: %w", err)
		}
		// The partition key is (expiry Date, start day), shown as
		// ('YYYY-MM-DD',N); tables from before migration 2 show the bare
		// expiry Date (quoted on newer servers). The shown value is a valid
		// literal for DROP PARTITION either way.
		day := strings.Trim(strings.SplitN(strings.TrimPrefix(p, "("), ",", 2)[0], "'")
		if len(day) == len(today) && day <= today {
			if !strings.HasPrefix(p, "(") {
				p = "'" + day + "'"
			}
			expired = append(expired, p)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list span partitions: %w", err)
	}
	for _, p := range expired {
		if err := s.conn.Exec(ctx, "ALTER TABLE "+table+onCluster+" DROP PARTITION "+p); err != nil {
			return nil, fmt.Errorf("drop span partition %s: %w", p, err)
		}
	}
	return expired, nil
}

// RunRetention drops expired partitions every interval until ctx is done.
func (s *Store) RunRetention(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		dropped, err := s.DropExpired(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("drop expired spans", "err", err)
		} else if len(dropped) > 0 {
			s.log.Info("expired span partitions dropped", "partitions", dropped)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
