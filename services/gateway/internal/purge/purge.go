// Package purge implements accounts.Purger: it asks each service that
// keeps project data (the registry: PostgreSQL rows and queued evaluation
// jobs; tracing: ClickHouse spans, queued span batches, delete epochs) to
// delete the projects' data, with the internal token, through
// POST /internal/projects/purge (pkg/purgewire).
package purge

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/purgewire"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Purger calls the services in turn.
type Purger struct {
	services []service
}

type service struct {
	name   string
	client *svcclient.Client
}

// Target is one service's base URL and the token of the gateway's pair
// with it.
type Target struct{ URL, Token string }

// New returns a purger over the registry and tracing. The timeout bounds
// each call; tracing waits there for ClickHouse to apply the delete.
func New(registry, tracing Target, timeout time.Duration) *Purger {
	return &Purger{services: []service{
		{"registry", svcclient.New(registry.URL, registry.Token, timeout)},
		{"tracing", svcclient.New(tracing.URL, tracing.Token, timeout)},
	}}
}

// PurgeProjects deletes the projects' data in every service, in batches of
// purgewire.MaxProjects; an error leaves some of it in place, and the call
// may be repeated (each service's purge is idempotent).
func (p *Purger) PurgeProjects(ctx context.Context, projectIDs []uuid.UUID) error {
	for len(projectIDs) > 0 {
		n := min(len(projectIDs), purgewire.MaxProjects)
		for _, s := range p.services {
			status, body, err := s.client.Post(ctx, scope.Scope{}, purgewire.Path, purgewire.Request{ProjectIDs: projectIDs[:n]}, 4096)
			if err != nil {
				return errs.Wrap(errs.Unavailable, "gateway.purge", fmt.Errorf("purge projects in %s: %w", s.name, err))
			}
			if status != http.StatusOK {
				return errs.Wrap(errs.Unavailable, "gateway.purge", fmt.Errorf("purge projects in %s: %d %s", s.name, status, body))
			}
		}
		projectIDs = projectIDs[n:]
	}
	return nil
}
