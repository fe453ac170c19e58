// Package evaljob is the JetStream side of the EVALS stream: its
// configuration, and publishing and decoding the jobs (evaluation.Job, the
// contract in pkg/evaluation) that the registry (and the runtime itself)
// publishes and the runtime's workers consume.
package evaljob

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/evaluation"
)

// StreamConfig is the EVALS stream: a work queue (a message is delivered to
// one consumer and removed once acknowledged), file storage, replicas as
// configured (3 on a NATS cluster), and a duplicate window for job ids.
func StreamConfig(replicas int, dedup time.Duration) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	return jetstream.StreamConfig{
		Name:       evaluation.Stream,
		Subjects:   []string{evaluation.SubjectPrefix + ">"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Replicas:   replicas,
		Duplicates: dedup,
	}
}

// Publisher stores a message and returns once JetStream acknowledged it;
// natsx.Publisher implements it.
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte, msgID string) (*jetstream.PubAck, error)
}

// Publish stores job on its project's subject.
func Publish(ctx context.Context, p Publisher, job evaluation.Job) error {
	if job.ProjectID == "" || job.RunID == "" || job.Kind == "" {
		return fmt.Errorf("evaljob: kind, project and run are required")
	}
	b, err := json.Marshal(job)
	if err != nil {
		return err
	}
	_, err = p.Publish(ctx, evaluation.Subject(job.ProjectID), b, job.ID)
	return err
}
