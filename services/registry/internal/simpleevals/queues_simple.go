package simpleevals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// The kinds of a simple queue: what its scenarios are made from.
const (
	QueueTraces    = "traces"
	QueueTestcases = "testcases"
	QueueQueries   = "queries"
	QueueTestsets  = "testsets"
)

// The direct input step keys of a queue run (Derive reads them as
// has_traces / has_testcases).
const (
	stepTraces    = "traces"
	stepTestcases = "testcases"
)

// QueueSettings are a simple queue's working settings.
type QueueSettings struct {
	BatchSize    *int  `json:"batch_size,omitempty"`
	BatchOffset  *int  `json:"batch_offset,omitempty"`
	IsSequential *bool `json:"is_sequential,omitempty"`
}

// SimpleQueueInput is a simple queue as a client creates it.
type SimpleQueueInput struct {
	Name        *string
	Description *string
	Tags, Meta  json.RawMessage
	Kind        string
	Sources     []StepRef // the queries or testsets of those kinds
	Evaluators  []StepRef
	Repeats     int
	Assignments [][]string
	StepKeys    []string
	Settings    QueueSettings
}

// ParseSimpleQueue reads a simple queue object at loc (body, queue).
// Evaluators sent as a list are human (the simple queues' default).
func ParseSimpleQueue(raw json.RawMessage, loc ...any) (*SimpleQueueInput, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var w struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Tags        json.RawMessage `json:"tags"`
		Meta        json.RawMessage `json:"meta"`
		Data        *struct {
			Kind        *string         `json:"kind"`
			Queries     json.RawMessage `json:"queries"`
			Testsets    json.RawMessage `json:"testsets"`
			Evaluators  json.RawMessage `json:"evaluators"`
			Repeats     *int            `json:"repeats"`
			Assignments [][]string      `json:"assignments"`
			StepKeys    []string        `json:"step_keys"`
			Settings    *QueueSettings  `json:"settings"`
		} `json:"data"`
	}
	if err := decodeAt(raw, &w, loc...); err != nil {
		return nil, err
	}
	in := &SimpleQueueInput{Name: w.Name, Description: w.Description, Tags: evaluations.Nullable(w.Tags), Meta: evaluations.Nullable(w.Meta), Repeats: 1}
	if err := evaluations.CheckObjects(nil, in.Tags, in.Meta, loc...); err != nil {
		return nil, err
	}
	if err := evaluations.CheckText(in.Name, 512, at("name")...); err != nil {
		return nil, err
	}
	if err := evaluations.CheckText(in.Description, 65536, at("description")...); err != nil {
		return nil, err
	}
	d := w.Data
	if d == nil {
		return nil, errs.Field("Field required", nil, at("data")...)
	}
	if d.Kind != nil {
		in.Kind = *d.Kind
	}
	srcKind := ""
	for _, s := range []struct {
		kind string
		raw  json.RawMessage
	}{{QueueQueries, d.Queries}, {QueueTestsets, d.Testsets}} {
		if s.raw == nil || string(s.raw) == "null" {
			continue
		}
		if srcKind != "" {
			return nil, errs.Field("A queue takes queries or testsets, not both", nil, at("data", s.kind)...)
		}
		refs, err := parseRefsDefault(s.raw, evaluations.OriginCustom, at("data", s.kind)...)
		if err != nil {
			return nil, err
		}
		if len(refs) == 0 {
			return nil, errs.Field("List should have at least 1 item", nil, at("data", s.kind)...)
		}
		srcKind, in.Sources = s.kind, refs
	}
	switch {
	case in.Kind == "" && srcKind == "":
		return nil, errs.Field("Send a kind (traces or testcases), queries or testsets", nil, at("data", "kind")...)
	case in.Kind == "":
		in.Kind = srcKind
	case srcKind != "" && in.Kind != srcKind:
		return nil, errs.Field("The kind does not match the "+srcKind+" sent", in.Kind, at("data", "kind")...)
	case srcKind != "":
	case in.Kind == QueueQueries || in.Kind == QueueTestsets:
		return nil, errs.Field("A queue of kind "+in.Kind+" needs data."+in.Kind, nil, at("data", in.Kind)...)
	case in.Kind != QueueTraces && in.Kind != QueueTestcases:
		return nil, errs.Field("Input should be 'traces', 'testcases', 'queries' or 'testsets'", in.Kind, at("data", "kind")...)
	}
	evs, err := parseRefsDefault(d.Evaluators, evaluations.OriginHuman, at("data", "evaluators")...)
	if err != nil {
		return nil, err
	}
	human := false
	for _, e := range evs {
		human = human || e.Origin == evaluations.OriginHuman
	}
	if !human {
		// The compatible platform answers 200 {count: 0}; a queue nobody can work is
		// a client error that names what is missing.
		return nil, errs.Field("A queue needs at least one human evaluator", nil, at("data", "evaluators")...)
	}
	in.Evaluators = evs
	if d.Repeats != nil {
		if *d.Repeats < 1 || *d.Repeats > evaluations.MaxRepeats {
			return nil, errs.Field("Input should be between 1 and "+strconv.Itoa(evaluations.MaxRepeats), *d.Repeats, at("data", "repeats")...)
		}
		in.Repeats = *d.Repeats
	}
	if len(d.Assignments) > in.Repeats {
		return nil, errs.Field("One list of assignees per repeat: at most "+strconv.Itoa(in.Repeats), nil, at("data", "assignments")...)
	}
	for i, us := range d.Assignments {
		for j, u := range us {
			if _, err := evaluations.ParseID(u, at("data", "assignments", i, j)...); err != nil {
				return nil, err
			}
		}
	}
	in.Assignments, in.StepKeys = d.Assignments, d.StepKeys
	if d.Settings != nil {
		in.Settings = *d.Settings
	}
	// Checked here, not only by the records: the queue is written after
	// its run, which must not be left without one.
	if b := in.Settings.BatchSize; b != nil && *b < 1 {
		return nil, errs.Field("Input should be greater than 0", *b, at("data", "settings", "batch_size")...)
	}
	if o := in.Settings.BatchOffset; o != nil && *o < 0 {
		return nil, errs.Field("Input should be greater than or equal to 0", *o, at("data", "settings", "batch_offset")...)
	}
	for i, k := range in.StepKeys {
		if k == "" || len(k) > evaluations.MaxStepKey {
			return nil, errs.Field("A step key is 1 to 255 characters", k, at("data", "step_keys", i)...)
		}
	}
	return in, nil
}

// parseRefsDefault is ParseStepRefs whose list form takes origin def.
func parseRefsDefault(raw json.RawMessage, def string, loc ...any) ([]StepRef, error) {
	refs, err := ParseStepRefs(raw, loc...)
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 && raw[0] == '[' {
		for i := range refs {
			refs[i].Origin = def
		}
	}
	return refs, nil
}

// SimpleQueue is a queue as the simple surface shows it.
type SimpleQueue struct {
	ID          string                 `json:"id"`
	RunID       string                 `json:"run_id"`
	Name        *string                `json:"name,omitempty"`
	Description *string                `json:"description,omitempty"`
	Flags       evaluations.QueueFlags `json:"flags"`
	Status      evaluations.Status     `json:"status"`
	Data        SimpleQueueData        `json:"data"`
	Tags        json.RawMessage        `json:"tags,omitempty"`
	Meta        json.RawMessage        `json:"meta,omitempty"`
	evaluations.Lifecycle
}

// SimpleQueueData is a simple queue's data as fetched.
type SimpleQueueData struct {
	Kind        string          `json:"kind,omitempty"`
	Queries     json.RawMessage `json:"queries,omitempty"`
	Testsets    json.RawMessage `json:"testsets,omitempty"`
	Evaluators  json.RawMessage `json:"evaluators,omitempty"`
	Repeats     int             `json:"repeats"`
	Assignments [][]string      `json:"assignments,omitempty"`
	StepKeys    []string        `json:"step_keys,omitempty"`
	Settings    *QueueSettings  `json:"settings,omitempty"`
}

// queueKind is the kind of a queue run, from its input steps.
func queueKind(r *evaluations.Run) string {
	switch {
	case r.Flags.HasQueries:
		return QueueQueries
	case r.Flags.HasTestsets:
		return QueueTestsets
	case r.Flags.HasTraces:
		return QueueTraces
	case r.Flags.HasTestcases:
		return QueueTestcases
	}
	return ""
}

// revisionIDsJSON is the refs' revision ids as a JSON list.
func revisionIDsJSON(refs []StepRef) json.RawMessage {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.RevisionID.String()
	}
	b, _ := json.Marshal(ids)
	return b
}

// ToSimpleQueue renders q over its run r (nil when the run is gone).
// The compatible web app validates every queue of a list against one
// schema and shows none when one fails, so the answer always has a
// data.kind (traces when the run says nothing else: items are added to
// such a queue by trace) and no empty tags object (its schema takes a
// list of strings there, or nothing).
func ToSimpleQueue(q *evaluations.Queue, r *evaluations.Run) SimpleQueue {
	tags := q.Tags
	if wire.IsNull(tags) || string(bytes.TrimSpace(tags)) == "{}" {
		tags = nil
	}
	out := SimpleQueue{ID: q.ID, RunID: q.RunID, Name: q.Name, Description: q.Description, Flags: q.Flags, Status: q.Status,
		Tags: tags, Meta: q.Meta, Lifecycle: q.Lifecycle,
		Data: SimpleQueueData{Kind: QueueTraces, Assignments: q.Data.UserIDs, StepKeys: q.Data.StepKeys, Repeats: 1}}

	if q.Data.BatchSize != nil || q.Data.BatchOffset != nil || q.Flags.IsSequential {
		seq := q.Flags.IsSequential
		out.Data.Settings = &QueueSettings{BatchSize: q.Data.BatchSize, BatchOffset: q.Data.BatchOffset, IsSequential: &seq}
	}
	if r == nil {
		return out
	}
	if k := queueKind(r); k != "" {
		out.Data.Kind = k
	}
	out.Data.Repeats = r.Data.RepeatCount()
	refs := stepRefsOf(r)
	// Queries and testsets are lists of revision ids, as the compatible
	// API answers them and its generated clients type them (string[]);
	// the {id: origin} form is accepted on input only. Evaluators keep
	// their origins: the clients take any shape there.
	if len(refs[QuerySteps]) > 0 {
		out.Data.Queries = revisionIDsJSON(refs[QuerySteps])
	}
	if len(refs[TestsetSteps]) > 0 {
		out.Data.Testsets = revisionIDsJSON(refs[TestsetSteps])
	}
	if len(refs[EvaluatorSteps]) > 0 {
		out.Data.Evaluators = StepRefsJSON(refs[EvaluatorSteps])
	}
	return out
}

// SimpleQueues holds the simple queues' use cases: a queue is a run with
// human evaluators and the queue its annotators work from.
type SimpleQueues struct {
	s *Simple
}

// NewSimpleQueues returns the simple queues over the simple evaluations.
func NewSimpleQueues(s *Simple) *SimpleQueues { return &SimpleQueues{s: s} }

// Create pins the queue's sources and evaluators, creates its run
// (running, active: a queue run stays running while any scenario is
// pending) and its queue. Without step keys or batch settings the queue is
// the run's default queue, given the name and the assignments; with them
// it is a queue of its own (a default queue covers its whole run). Queues
// over queries or testsets are handed to the workers (a run job), which
// mint the scenarios; traces and testcases queues get theirs as they are
// added.
func (q *SimpleQueues) Create(ctx context.Context, sc scope.Scope, in *SimpleQueueInput) (*SimpleQueue, error) {
	s := q.s
	src := Sources{Evaluators: in.Evaluators}
	switch in.Kind {
	case QueueQueries:
		src.Queries = in.Sources
	case QueueTestsets:
		src.Testsets = in.Sources
	}
	pinned, err := s.fam.Pin(ctx, sc, src, false)
	if err != nil {
		return nil, err
	}
	steps := pinned.Steps
	switch in.Kind {
	case QueueTraces, QueueTestcases:
		key := stepTraces
		if in.Kind == QueueTestcases {
			key = stepTestcases
		}
		input := evaluations.Step{Key: key, Type: evaluations.TypeInput, Origin: evaluations.OriginCustom}
		steps = append([]evaluations.Step{input}, steps...)
		for i := range steps {
			if steps[i].Type == evaluations.TypeAnnotation {
				steps[i].Inputs = []evaluations.StepInput{{Key: "__all_inputs__"}}
			}
		}
	}
	for i, k := range in.StepKeys {
		if !inSteps(steps, k) {
			return nil, errs.Field("Step not found in this queue's run", k, "body", "queue", "data", "step_keys", i)
		}
	}
	repeats := in.Repeats
	runs, err := s.svc.CreateRuns(ctx, sc, []evaluations.Run{{Name: in.Name, Description: in.Description, Tags: in.Tags, Meta: in.Meta,
		Status: evaluations.Pending, Data: evaluations.RunData{Steps: steps, Mappings: pinned.Mappings, Repeats: &repeats}}})
	if err != nil {
		return nil, err
	}
	run := &runs[0]
	if in.Kind == QueueQueries || in.Kind == QueueTestsets {
		run, err = s.start(ctx, sc, run)
	} else {
		run, err = s.activate(ctx, sc, run, nil)
	}
	if err != nil {
		return nil, err
	}
	seq := in.Settings.IsSequential != nil && *in.Settings.IsSequential
	data := evaluations.QueueData{UserIDs: in.Assignments}
	var queue *evaluations.Queue
	if len(in.StepKeys) > 0 || in.Settings.BatchSize != nil || in.Settings.BatchOffset != nil {
		data.StepKeys, data.BatchSize, data.BatchOffset = in.StepKeys, in.Settings.BatchSize, in.Settings.BatchOffset
		qs, err := s.svc.CreateQueues(ctx, sc, []evaluations.Queue{{RunID: run.ID, Name: in.Name, Description: in.Description,
			Flags: evaluations.QueueFlags{IsSequential: seq}, Status: evaluations.Running, Data: data}})
		if err != nil {
			return nil, err
		}
		queue = &qs[0]
	} else {
		def, err := s.svc.RunDefaultQueue(ctx, sc, uuid.MustParse(run.ID))
		if err != nil {
			return nil, err
		}
		if def == nil {
			return nil, fmt.Errorf("queue run %s has no default queue", run.ID)
		}
		st := evaluations.Running
		qs, err := s.svc.EditQueues(ctx, sc, []evaluations.QueueEdit{{ID: def.ID, Name: in.Name, Description: in.Description,
			Flags: &evaluations.QueueFlagsEdit{IsSequential: &seq}, Status: &st, Data: &data}})
		if err != nil {
			return nil, err
		}
		if len(qs) == 0 {
			return nil, fmt.Errorf("default queue %s of run %s vanished", def.ID, run.ID)
		}
		queue = &qs[0]
	}
	out := ToSimpleQueue(queue, run)
	return &out, nil
}

// queue returns queue id with its run; a missing queue is a 404.
func (q *SimpleQueues) queue(ctx context.Context, sc scope.Scope, id uuid.UUID) (*evaluations.Queue, *evaluations.Run, error) {
	x, err := q.s.svc.Queue(ctx, sc, id)
	if err != nil {
		return nil, nil, err
	}
	if x == nil {
		return nil, nil, errs.Message(errs.NotFound, "evaluations.queue_not_found", "Queue not found.", map[string]any{"queue_id": id.String()})
	}
	r, err := q.s.svc.Run(ctx, sc, uuid.MustParse(x.RunID))
	if err != nil {
		return nil, nil, err
	}
	return x, r, nil
}

// Fetch returns the queue id, or nil (also when archived: DeleteOne).
func (q *SimpleQueues) Fetch(ctx context.Context, sc scope.Scope, id uuid.UUID) (*SimpleQueue, error) {
	x, err := q.s.svc.Queue(ctx, sc, id)
	if err != nil || x == nil || x.DeletedAt != nil {
		return nil, err
	}
	r, err := q.s.svc.Run(ctx, sc, uuid.MustParse(x.RunID))
	if err != nil {
		return nil, err
	}
	out := ToSimpleQueue(x, r)
	return &out, nil
}

// SimpleQueueFilter narrows a simple-queue query after the page is read:
// Kind keeps the queues of that kind, User those the user may work (it is
// assigned, or the queue assigns nobody). The page's cursor is the
// underlying queues', so a filtered page may be short.
type SimpleQueueFilter struct {
	Kind string
	User *uuid.UUID
}

// Query returns a page of queues matching f, each over its run.
func (q *SimpleQueues) Query(ctx context.Context, sc scope.Scope, f evaluations.Filter, more ...SimpleQueueFilter) ([]SimpleQueue, *evaluations.Page[evaluations.Queue], error) {
	p, err := q.s.svc.QueryQueues(ctx, sc, f)
	if err != nil {
		return nil, nil, err
	}
	var runIDs []uuid.UUID
	for _, x := range p.Items {
		runIDs = append(runIDs, uuid.MustParse(x.RunID))
	}
	byID := map[string]*evaluations.Run{}
	if len(runIDs) > 0 {
		ids := evaluations.DedupIDs(runIDs)
		runs, err := q.s.svc.Store().Runs(ctx, sc.ProjectID, evaluations.Filter{IDs: ids, Windowing: evaluations.UpTo(len(ids))})
		if err != nil {
			return nil, nil, err
		}
		for i := range runs {
			byID[runs[i].ID] = &runs[i]
		}
	}
	out := make([]SimpleQueue, 0, len(p.Items))
	for i := range p.Items {
		x := ToSimpleQueue(&p.Items[i], byID[p.Items[i].RunID])
		keep := true
		for _, m := range more {
			if m.Kind != "" && x.Data.Kind != m.Kind {
				keep = false
			}
			if m.User != nil && len(p.Items[i].Data.UserIDs) > 0 && !evaluations.Assigned(&p.Items[i], *m.User) {
				keep = false
			}
		}
		if keep {
			out = append(out, x)
		}
	}
	return out, &p, nil
}

// Delete deletes queues; a default queue is a 409 (archive it, or delete
// its run).
func (q *SimpleQueues) Delete(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	return q.s.svc.DeleteQueues(ctx, sc, ids)
}

// DeleteOne deletes the queue id as the compatible web app's delete
// button asks (DELETE /simple/queues/{id}); nil when it does not exist.
// A simple queue is its run's default queue, which is never hard-deleted
// (its run and annotations stay): it is archived, so it leaves the lists
// and reads as absent, and comes back only if the run is edited and
// still has a human step. Any other queue is deleted.
func (q *SimpleQueues) DeleteOne(ctx context.Context, sc scope.Scope, id uuid.UUID) (*uuid.UUID, error) {
	x, err := q.s.svc.Queue(ctx, sc, id)
	if err != nil || x == nil || x.DeletedAt != nil {
		return nil, err
	}
	if !x.Flags.IsDefault {
		done, err := q.s.svc.DeleteQueues(ctx, sc, []uuid.UUID{id})
		if err != nil || len(done) == 0 {
			return nil, err
		}
		return &done[0], nil
	}
	if err := q.s.svc.ArchiveDefaultQueue(ctx, sc, id); err != nil {
		return nil, err
	}
	return &id, nil
}

// Scenarios returns a page of the scenarios of queue id, those assigned
// to userID when given.
func (q *SimpleQueues) Scenarios(ctx context.Context, sc scope.Scope, id uuid.UUID, userID *uuid.UUID, f evaluations.Filter) (*evaluations.Page[evaluations.Scenario], error) {
	return q.s.svc.QueueScenarios(ctx, sc, id, userID, f)
}

// AddItems creates one scenario per trace or testcase id on the queue's
// run, each with its input cell (success, holding the id), the human and
// custom cells left pending, and publishes a process job when the run has
// auto steps. kind is traces or testcases; a queue backed by the other
// kind (or by queries or testsets) is a 400.
func (q *SimpleQueues) AddItems(ctx context.Context, sc scope.Scope, id uuid.UUID, kind string, ids []string) ([]evaluations.Scenario, error) {
	x, r, err := q.queue(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	field := "trace_ids"
	if kind == QueueTestcases {
		field = "testcase_ids"
	}
	if r == nil {
		return nil, evaluations.RunNotFound(x.RunID)
	}
	if k := queueKind(r); k != kind {
		return nil, errs.Message(errs.Invalid, "evaluations.queue_kind",
			fmt.Sprintf("Queue '%s' is backed by %s, not %s.", x.ID, k, kind), map[string]any{"queue_id": x.ID, "kind": k})
	}
	if r.Flags.IsClosed {
		return nil, evaluations.ClosedRun(r.ID)
	}
	if len(ids) == 0 {
		return nil, errs.Field("List should have at least 1 item", nil, "body", field)
	}
	if len(ids) > maxQueueItems {
		return nil, errs.Field("List should have at most "+strconv.Itoa(maxQueueItems)+" items", nil, "body", field)
	}
	inputKey := stepTraces
	if kind == QueueTestcases {
		inputKey = stepTestcases
	}
	var ss []evaluations.Scenario
	var items []string
	seen := map[string]bool{}
	runNS := uuid.MustParse(r.ID)
	for i, v := range ids {
		switch kind {
		case QueueTraces:
			tid, ok := evaluations.NormTraceID(v)
			if !ok {
				return nil, errs.Field("Input should be a trace id (32 hex characters or a UUID)", v, "body", field, i)
			}
			v = tid
		default:
			u, err := evaluations.ParseID(v, "body", field, i)
			if err != nil {
				return nil, err
			}
			v = u.String()
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		// The runtime's scheme for a source item's scenario (UUIDv5 of the
		// item in the run's namespace): adding a trace or testcase again
		// answers its scenario instead of a second one.
		id := uuid.NewSHA1(runNS, []byte(inputKey+":"+strings.TrimSuffix(kind, "s")+":"+v))
		ss = append(ss, evaluations.Scenario{ID: id.String(), RunID: r.ID, Status: evaluations.Pending})
		items = append(items, v)
	}
	// Items already in the queue keep their cells (an annotation done
	// stays done): only new scenarios get theirs.
	existing, err := q.s.svc.Store().Scenarios(ctx, sc.ProjectID, evaluations.Filter{IDs: scenarioIDs(ss), RunIDs: []uuid.UUID{runNS}, Windowing: evaluations.UpTo(len(ss))})
	if err != nil {
		return nil, err
	}
	old := map[string]bool{}
	for _, e := range existing {
		old[e.ID] = true
	}
	var fresh []evaluations.Scenario
	var freshItems []string
	for i := range ss {
		if !old[ss[i].ID] {
			fresh, freshItems = append(fresh, ss[i]), append(freshItems, items[i])
		}
	}
	all := scenarioIDs(ss)
	if len(fresh) == 0 {
		return existing, nil
	}
	// The scenarios and their cells are written in one transaction: a
	// scenario without its cells would be skipped by the next add.
	var created []evaluations.Scenario
	err = q.s.svc.InTx(ctx, func(tx *evaluations.Service) error {
		var err error
		if created, err = tx.CreateScenarios(ctx, sc, fresh); err != nil {
			return err
		}
		var cells []evaluations.Result
		for i, scen := range created {
			c := evaluations.Result{RunID: r.ID, ScenarioID: scen.ID, StepKey: inputKey, Status: evaluations.Success}
			v := freshItems[i]
			if kind == QueueTraces {
				c.TraceID = &v
			} else {
				c.TestcaseID = &v
			}
			cells = append(cells, c)
			for _, step := range r.Data.Steps {
				if !step.Manual() { // a queue opens pending cells for what people write, not for what workers run
					continue
				}
				for rep := 0; rep < r.Data.RepeatCount(); rep++ {
					cells = append(cells, evaluations.Result{RunID: r.ID, ScenarioID: scen.ID, StepKey: step.Key, RepeatIdx: rep, Status: evaluations.Pending})
				}
			}
		}
		for len(cells) > 0 {
			n := min(len(cells), tx.Config().MaxBatch)
			if _, err := tx.UpsertResults(ctx, sc, cells[:n]); err != nil {
				return err
			}
			cells = cells[n:]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Flags.HasAuto {
		sl := evaluation.Slice{}
		for _, scen := range created {
			sl.ScenarioIDs = append(sl.ScenarioIDs, scen.ID)
		}
		if err := q.s.publish(ctx, sc, evaluation.Job{Kind: evaluation.KindProcess, RunID: r.ID, Slice: sl,
			ID: fmt.Sprintf("process:%s:%s", r.ID, created[0].ID)}); err != nil {
			return nil, err
		}
	}
	scens, err := q.s.svc.Store().Scenarios(ctx, sc.ProjectID, evaluations.Filter{IDs: all, Windowing: evaluations.UpTo(len(all))})
	if err != nil {
		return nil, err
	}
	return scens, nil
}

// maxQueueItems bounds one add of traces or testcases (the cells of one
// request stay within the records' batch limit).
const maxQueueItems = 1000

func scenarioIDs(ss []evaluations.Scenario) []uuid.UUID {
	out := make([]uuid.UUID, len(ss))
	for i := range ss {
		out[i] = uuid.MustParse(ss[i].ID)
	}
	return out
}
