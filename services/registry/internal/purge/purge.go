// Package purge deletes every registry record of deleted projects: the
// rows of every registry table, in one transaction, and
// the evaluation jobs still queued for them in JetStream. The gateway calls
// it (POST /internal/projects/purge) before it deletes the projects.
package purge

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
)

// Purger deletes projects' records.
type Purger struct {
	Pool *pgxpool.Pool
	JS   jetstream.JetStream // nil: no job stream to purge
}

// Tables are the registry's tables, all keyed by project_id. Listed, not
// read from the catalog: the registry and the gateway may share a database
// (the default configuration), and the gateway's own tables (keys,
// memberships, the append-only audit log) are the gateway's to delete. A
// test compares the list with what the migrations create.
var Tables = []string{
	"artifacts", "variants", "revisions", "testcases", "secrets",
	"evaluation_runs", "evaluation_scenarios", "evaluation_results", "evaluation_metrics", "evaluation_queues",
	"model_call_cache", "evaluation_provider_waits",
}

// Projects deletes every row of the projects in every registry table, all
// or nothing, then drops their queued evaluation jobs. Idempotent:
// projects with nothing left are a no-op.
func (p *Purger) Projects(ctx context.Context, ids []uuid.UUID) error {
	err := pgx.BeginFunc(ctx, p.Pool, func(tx pgx.Tx) error {
		for _, t := range Tables {
			// Foreign keys between these tables cascade, so the order
			// does not matter.
			if _, err := tx.Exec(ctx, `DELETE FROM `+pgx.Identifier{t}.Sanitize()+` WHERE project_id = ANY($1)`, ids); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		}
		return nil
	})
	if err != nil {
		return errs.Wrap(errs.Unavailable, "registry.purge", fmt.Errorf("purge projects: %w", err))
	}
	if p.JS == nil {
		return nil
	}
	s, err := p.JS.Stream(ctx, evaluation.Stream)
	if err != nil {
		return errs.Wrap(errs.Unavailable, "registry.purge", fmt.Errorf("purge evaluation jobs: %w", err))
	}
	for _, id := range ids {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(evaluation.Subject(id.String()))); err != nil {
			return errs.Wrap(errs.Unavailable, "registry.purge", fmt.Errorf("purge evaluation jobs of %s: %w", id, err))
		}
	}
	return nil
}
