package httpapi_test

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
)

// testEvalLimit is the HTTP tests' query bound, low so windowing shows.
const testEvalLimit = 50

// evalJobs records the jobs the routes publish; the NATS publisher is
// lane eval-simple's and tested with NATS there.
type evalJobs struct {
	mu   sync.Mutex
	jobs []evaluation.Job
}

func (j *evalJobs) Publish(_ context.Context, job evaluation.Job) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.jobs = append(j.jobs, job)
	return nil
}

// withEvaluations adds the evaluation records on pool, publishing to jobs,
// and the reports over them to s.
func withEvaluations(s httpapi.Services, pool *pgxpool.Pool, jobs *evalJobs) httpapi.Services {
	s.Evaluations = evaluations.NewService(pgstore.New(pool).Evaluations(), jobs, evaluations.Config{MaxLimit: testEvalLimit})
	s.Reports = evalreports.New(s.Evaluations)
	return s
}
