package evaluations

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// QueueEdit is an edit of a queue: nil fields are kept.
type QueueEdit struct {
	ID          string          `json:"id"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Flags       *QueueFlagsEdit `json:"flags"`
	Status      *Status         `json:"status"`
	Data        *QueueData      `json:"data"`
	Tags        json.RawMessage `json:"tags"`
	Meta        json.RawMessage `json:"meta"`
}

// QueueFlagsEdit are the flags a queue edit sets; nil keeps the stored
// value (so setting is_sequential alone never demotes a default queue).
type QueueFlagsEdit struct {
	IsSequential *bool `json:"is_sequential"`
	IsDefault    *bool `json:"is_default"`
}

// prepareQueue validates a queue's data at loc: batch_size > 0,
// batch_offset >= 0, user ids UUIDs, and no filter on a default queue.
func prepareQueue(q *Queue, loc ...any) error {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var err error
	if q.Status, err = CheckStatus(q.Status, Pending, at("status")...); err != nil {
		return err
	}
	if err := CheckObjects(nil, q.Tags, q.Meta, loc...); err != nil {
		return err
	}
	q.Tags, q.Meta = Nullable(q.Tags), Nullable(q.Meta)
	if err := CheckText(q.Name, 512, at("name")...); err != nil {
		return err
	}
	if err := CheckText(q.Description, 65536, at("description")...); err != nil {
		return err
	}
	d := &q.Data
	if d.BatchSize != nil && *d.BatchSize < 1 {
		return errs.Field("Input should be greater than 0", *d.BatchSize, at("data", "batch_size")...)
	}
	if d.BatchOffset != nil && *d.BatchOffset < 0 {
		return errs.Field("Input should be greater than or equal to 0", *d.BatchOffset, at("data", "batch_offset")...)
	}
	if len(d.UserIDs) > MaxRepeats {
		return errs.Field("List should have at most "+itoa(MaxRepeats)+" items", nil, at("data", "user_ids")...)
	}
	for i, us := range d.UserIDs {
		for j, u := range us {
			if _, err := ParseID(u, at("data", "user_ids", i, j)...); err != nil {
				return err
			}
		}
	}
	for i, id := range d.ScenarioIDs {
		if _, err := ParseID(id, at("data", "scenario_ids", i)...); err != nil {
			return err
		}
	}
	if q.Flags.IsDefault && (len(d.ScenarioIDs) > 0 || len(d.StepKeys) > 0 || d.BatchSize != nil || d.BatchOffset != nil) {
		return errs.Field("A default queue covers its whole run: it takes no scenario_ids, step_keys, batch_size or batch_offset", nil, at("data")...)
	}
	return nil
}

// CreateQueues creates queues on their runs; a queue of a closed run is a
// 409, a second default queue of a run a 409, a default queue with
// filters a 422.
func (s *Service) CreateQueues(ctx context.Context, sc scope.Scope, qs []Queue) ([]Queue, error) {
	if err := s.checkBatch(len(qs), "queues"); err != nil {
		return nil, err
	}
	runIDs, err := runIDsAt("queues", len(qs), func(i int) string { return qs[i].RunID })
	if err != nil {
		return nil, err
	}
	now := s.now()
	for i := range qs {
		q := &qs[i]
		q.RunID = runIDs[i].String()
		if q.ID == "" {
			q.ID = newID().String()
		} else if _, err := ParseID(q.ID, "body", "queues", i, "id"); err != nil {
			return nil, err
		}
		if err := prepareQueue(q, "body", "queues", i); err != nil {
			return nil, err
		}
		q.Lifecycle = Lifecycle{CreatedAt: &now, CreatedByID: user(sc)}
	}
	err = s.store.InTx(ctx, func(st Store) error {
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, locOf("queues", runIDs)); err != nil {
			return err
		}
		for _, q := range qs {
			if err := st.InsertQueue(ctx, sc.ProjectID, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return qs, nil
}

// EditQueues applies edits; demoting a default queue is a 409, filters on
// one a 422, a queue of a closed run a 409. Absent queues are skipped.
func (s *Service) EditQueues(ctx context.Context, sc scope.Scope, edits []QueueEdit) ([]Queue, error) {
	if err := s.checkBatch(len(edits), "queues"); err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(edits))
	for i, e := range edits {
		id, err := ParseID(e.ID, "body", "queues", i, "id")
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	now := s.now()
	var out []Queue
	err := s.store.InTx(ctx, func(st Store) error {
		cur, err := st.Queues(ctx, sc.ProjectID, Filter{IDs: ids, IncludeArchived: true, Windowing: UpTo(len(ids))})
		if err != nil {
			return err
		}
		byID := map[string]*Queue{}
		var runIDs []uuid.UUID
		for i := range cur {
			byID[cur[i].ID] = &cur[i]
			runIDs = append(runIDs, uuid.MustParse(cur[i].RunID))
		}
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, func(uuid.UUID) []any { return []any{"body", "queues"} }); err != nil {
			return err
		}
		for i, e := range edits {
			q, ok := byID[ids[i].String()]
			if !ok {
				continue
			}
			wasDefault := q.Flags.IsDefault
			if e.Name != nil {
				q.Name = e.Name
			}
			if e.Description != nil {
				q.Description = e.Description
			}
			if f := e.Flags; f != nil {
				if f.IsSequential != nil {
					q.Flags.IsSequential = *f.IsSequential
				}
				if f.IsDefault != nil {
					q.Flags.IsDefault = *f.IsDefault
				}
			}
			if e.Status != nil {
				q.Status = *e.Status
			}
			if e.Data != nil {
				q.Data = *e.Data
			}
			if e.Tags != nil {
				q.Tags = e.Tags
			}
			if e.Meta != nil {
				q.Meta = e.Meta
			}
			if wasDefault && !q.Flags.IsDefault {
				return errDefaultQueueDemote
			}
			if err := prepareQueue(q, "body", "queues", i); err != nil {
				return err
			}
			q.UpdatedAt, q.UpdatedByID = &now, user(sc)
			u, err := st.UpdateQueue(ctx, sc.ProjectID, *q)
			if err != nil {
				return err
			}
			out = append(out, *u)
		}
		return nil
	})
	return out, err
}

// DeleteQueues hard-deletes queues; a default queue is a 409 (archive it
// by editing its run instead), a queue of a closed run a 409.
func (s *Service) DeleteQueues(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	return s.deleteChildren(ctx, sc, KindQueue, ids, func(st Store, f Filter) ([]string, error) {
		xs, err := st.Queues(ctx, sc.ProjectID, f)
		runs := make([]string, len(xs))
		for i := range xs {
			if xs[i].Flags.IsDefault {
				return nil, errDefaultQueueDemote
			}
			runs[i] = xs[i].RunID
		}
		return runs, err
	})
}

// ArchiveDefaultQueue archives the default queue id, in a transaction
// guarded like a delete (a closed run's is a 409).
func (s *Service) ArchiveDefaultQueue(ctx context.Context, sc scope.Scope, id uuid.UUID) error {
	return s.store.InTx(ctx, func(st Store) error {
		xs, err := st.Queues(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, IncludeArchived: true, Windowing: UpTo(1)})
		if err != nil || len(xs) == 0 || xs[0].DeletedAt != nil {
			return err
		}
		if _, err := guardRuns(ctx, st, sc.ProjectID, []uuid.UUID{uuid.MustParse(xs[0].RunID)}, false,
			func(uuid.UUID) []any { return []any{"path", "queue_id"} }); err != nil {
			return err
		}
		now := s.now()
		q := xs[0]
		q.DeletedAt, q.DeletedByID, q.UpdatedAt, q.UpdatedByID = &now, user(sc), &now, user(sc)
		_, err = st.UpdateQueue(ctx, sc.ProjectID, q)
		return err
	})
}

// Queue returns the queue id (archived or not), or nil.
func (s *Service) Queue(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Queue, error) {
	xs, err := s.store.Queues(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, IncludeArchived: true, Windowing: UpTo(1)})
	if err != nil || len(xs) == 0 {
		return nil, err
	}
	return &xs[0], nil
}

// QueryQueues returns a bounded page of the queues matching f; archived
// ones only with IncludeArchived.
func (s *Service) QueryQueues(ctx context.Context, sc scope.Scope, f Filter) (Page[Queue], error) {
	f.Windowing = s.window(f.Windowing)
	xs, err := s.store.Queues(ctx, sc.ProjectID, f)
	if err != nil {
		return Page[Queue]{}, err
	}
	return page(xs, f.Windowing, func(x *Queue) string { return x.ID }), nil
}

// QueueScenarios returns a page of the scenarios a queue covers: its
// run's, narrowed to the queue's scenario_ids, and to f. With a user, a
// queue with assignments (user_ids) covers nothing for a user it does not
// list. Nil when the queue does not exist.
func (s *Service) QueueScenarios(ctx context.Context, sc scope.Scope, id uuid.UUID, userID *uuid.UUID, f Filter) (*Page[Scenario], error) {
	q, err := s.Queue(ctx, sc, id)
	if err != nil || q == nil {
		return nil, err
	}
	f.RunIDs = []uuid.UUID{uuid.MustParse(q.RunID)}
	if len(q.Data.ScenarioIDs) > 0 {
		allowed := map[uuid.UUID]bool{}
		for _, x := range q.Data.ScenarioIDs {
			allowed[uuid.MustParse(x)] = true
		}
		if len(f.IDs) == 0 {
			for x := range allowed {
				f.IDs = append(f.IDs, x)
			}
		} else {
			var keep []uuid.UUID
			for _, x := range f.IDs {
				if allowed[x] {
					keep = append(keep, x)
				}
			}
			if len(keep) == 0 {
				return &Page[Scenario]{Items: []Scenario{}}, nil
			}
			f.IDs = keep
		}
	}
	if userID != nil && len(q.Data.UserIDs) > 0 && !Assigned(q, *userID) {
		return &Page[Scenario]{Items: []Scenario{}}, nil
	}
	p, err := s.QueryScenarios(ctx, sc, f)
	return &p, err
}

// Assigned tells whether queue q assigns user u (in any repeat).
func Assigned(q *Queue, u uuid.UUID) bool {
	for _, us := range q.Data.UserIDs {
		for _, x := range us {
			if id, err := uuid.Parse(x); err == nil && id == u {
				return true
			}
		}
	}
	return false
}
