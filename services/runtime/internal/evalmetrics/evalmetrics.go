// Package evalmetrics computes an evaluation run's metrics, in the
// compatible platform's shape, from the traces of its result cells, through the
// tracing service's grouped analytics (POST /internal/analytics/groups):
// for the whole run (global), per scenario (variational) and per time
// bucket (temporal), each shaped {step_key: {path: {type, count, …}}}.
//
// Specs. Every step gets the four defaults (cumulative duration, errors,
// costs.total, tokens.total; numeric/continuous) and one spec per leaf of
// its outputs schema (Specs). A step without a schema may get one from its
// traces (Infer), as the compatible platform does with genson.
//
// Failed evaluators score 0. A failed evaluator cell keeps its error on the
// result (the worker records it); in the metrics it counts as a score of 0:
// its trace (the runtime records one for a failed invocation, with an
// exception event and no outputs) counts as 0 for every numeric leaf and
// as false for every boolean leaf of an annotation step's outputs, through
// the tracing spec option on_error. So count, sum, mean, percentiles and
// rates all include the failure, and categorical and string leaves (which
// have no "zero") do not count it. A trace that has the leaf keeps its own
// value, and a cell with no trace at all (refused before anything ran)
// cannot be counted: the worker should not write such a cell as success.
//
// Readiness. Traces reach ClickHouse asynchronously (tracing → JetStream →
// writer). Compute probes (a read of the roots' names only) until every
// listed trace's root span is there, then reads the metrics once; if Wait
// passes first, it fails with a *MissingError naming the cells whose
// traces are not readable, rather than store metrics over part of the run.
package evalmetrics

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/scope"
)

// Cell is one result cell whose trace the metrics read: the scenario it
// belongs to, its step, its trace (cells without one are skipped) and,
// for temporal (live) scenarios, the scenario's timestamp, which is its
// time bucket. Earlier says the trace is an earlier run's (a reused
// cell's), most likely stored long ago.
type Cell struct {
	ScenarioID, StepKey, TraceID string
	Timestamp                    *time.Time
	Earlier                      bool
}

// Step is a run step as the metrics need it: its key, type (input,
// invocation, annotation), origin (auto, human, custom) and outputs schema
// (JSON Schema; nil when the evaluator declares none).
type Step struct {
	Key, Type, Origin string
	Outputs           json.RawMessage
}

// Spec is a tracing analytics metric spec (the tracing service's
// query.MetricSpec).
type Spec struct {
	Type string `json:"type"`
	Path string `json:"path"`
	// OnError is what a failed invocation's root counts with where it has
	// no value (see the package comment).
	OnError any `json:"on_error,omitempty"`
}

// Data is a metric record's data: step key → spec path → statistics.
type Data map[string]map[string]any

// Result is a run's metrics at the levels asked for: Global for the whole
// run, Scenarios by scenario id, Temporal by time bucket (the cells'
// timestamps, in UTC).
type Result struct {
	Global    Data
	Scenarios map[string]Data
	Temporal  map[time.Time]Data
}

// Levels chooses what Compute computes.
type Levels uint8

const (
	// Global is the metrics of the whole run (no scenario, no timestamp).
	Global Levels = 1 << iota
	// PerScenario is one record per scenario (variational).
	PerScenario
	// PerTimestamp is one record per time bucket (temporal).
	PerTimestamp
	// AllLevels is all three.
	AllLevels = Global | PerScenario | PerTimestamp
)

// Group is the grouped analytics' answer for one group: metrics keyed by
// spec path, and how many of the group's listed traces have a stored root.
type Group struct {
	Metrics map[string]any `json:"metrics"`
	Roots   int            `json:"roots"`
}

// Analytics is the tracing grouped analytics. Groups computes specs over
// the root spans of each named group of traces in one read; a trace id
// listed twice in a group counts twice. At most MaxTraces distinct ids and
// MaxSpecs specs per call.
type Analytics interface {
	Groups(ctx context.Context, sc scope.Scope, specs []Spec, groups map[string][]string) (map[string]Group, error)
}

// Bounds of one grouped analytics call, as the tracing service enforces
// them: 10,000 distinct trace ids (its MaxGroupTraces) and 50 specs (the
// default TRACING_QUERY_FILTER_MAX_CONDITIONS, which specs count against).
const (
	MaxTraces = 10000
	MaxSpecs  = 50
)

// ErrTooManyTraces is returned when one group holds more traces than one
// grouped read takes: a step's run group (Global) over more than 10,000
// cells, or a time bucket's. Exact percentiles of a group need all its
// values in one read; scenario groups are spread over reads instead.
var ErrTooManyTraces = errors.New("evalmetrics: a metrics group has more traces than one analytics read takes (10,000)")

// MissingError lists the cells whose traces were not readable within the
// wait.
type MissingError struct {
	Cells []Cell
	Wait  time.Duration
}

func (e *MissingError) Error() string {
	ids := make([]string, 0, 3)
	for i, c := range e.Cells {
		if i == 3 {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, fmt.Sprintf("%s/%s trace %s", c.ScenarioID, c.StepKey, c.TraceID))
	}
	return fmt.Sprintf("evalmetrics: %d cells' traces not readable after %s: %s", len(e.Cells), e.Wait, strings.Join(ids, ", "))
}

// Computer computes metrics through a tracing service.
type Computer struct {
	Tracing Analytics
	// Spans reads root spans for Infer; nil makes Infer fail.
	Spans Spans
	// Wait bounds how long Compute waits for traces to be readable
	// (default 30 s); Poll is the longest pause between probes (default
	// 250 ms; the first pauses are shorter).
	Wait, Poll time.Duration
	// MaxTraces is the most distinct traces of one read (default, and at
	// most, the tracing service's MaxTraces).
	MaxTraces int
	// Parallel is how many reads run at once (default 4).
	Parallel int
}

// DefaultSpecs are the four specs every step gets, as on the compatible
// platform.
func DefaultSpecs() []Spec {
	return []Spec{
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.duration.cumulative"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.errors.cumulative"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.costs.cumulative.total"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.tokens.cumulative.total"},
	}
}

// outputsPath is where a root span holds its outputs.
const outputsPath = "attributes.ag.data.outputs"

// maxSchemaDepth bounds the walk of an outputs schema (a stored schema is
// a client's).
const maxSchemaDepth = 16

// Specs is the step's specs: the defaults, then one per leaf of its
// outputs schema in path order. An annotation step's numeric and boolean
// leaves count a failed evaluator as 0 and false. A schema that is not
// JSON, or parts of it that name no type, add no specs: metrics are
// best-effort over what the schema says.
func Specs(step Step) []Spec {
	specs := DefaultSpecs()
	if len(step.Outputs) == 0 {
		return specs
	}
	var schema map[string]any
	if json.Unmarshal(step.Outputs, &schema) != nil {
		return specs
	}
	var leaves []Spec
	walkSchema(schema, outputsPath, 0, &leaves)
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].Path < leaves[j].Path })
	if step.Type == "annotation" {
		for i := range leaves {
			switch leaves[i].Type {
			case "numeric/continuous", "numeric/discrete":
				leaves[i].OnError = 0.0
			case "binary":
				leaves[i].OnError = false
			}
		}
	}
	return append(specs, leaves...)
}

// walkSchema adds the spec of each leaf under schema:
// number → numeric/continuous; integer → numeric/discrete; boolean →
// binary; string with enum → categorical/single; other string → string;
// array of enum strings → categorical/multiple; object without properties
// → json; an object with properties is walked. Nullable types (["number",
// "null"]) count as their other type; other unions and other arrays add
// nothing.
func walkSchema(schema map[string]any, path string, depth int, out *[]Spec) {
	if depth > maxSchemaDepth {
		return
	}
	switch schemaType(schema) {
	case "number":
		*out = append(*out, Spec{Type: "numeric/continuous", Path: path})
	case "integer":
		*out = append(*out, Spec{Type: "numeric/discrete", Path: path})
	case "boolean":
		*out = append(*out, Spec{Type: "binary", Path: path})
	case "string":
		if _, ok := schema["enum"].([]any); ok {
			*out = append(*out, Spec{Type: "categorical/single", Path: path})
		} else {
			*out = append(*out, Spec{Type: "string", Path: path})
		}
	case "array":
		items, _ := schema["items"].(map[string]any)
		if _, ok := items["enum"].([]any); ok && schemaType(items) == "string" {
			*out = append(*out, Spec{Type: "categorical/multiple", Path: path})
		}
	case "object":
		props, _ := schema["properties"].(map[string]any)
		if len(props) == 0 {
			*out = append(*out, Spec{Type: "json", Path: path})
			return
		}
		for k, v := range props {
			sub, ok := v.(map[string]any)
			if !ok || k == "" || strings.Contains(k, ".") {
				continue // a dotted key cannot be told from nesting in a path
			}
			walkSchema(sub, path+"."+k, depth+1, out)
		}
	}
}

// schemaType is the schema's type: the one named, the non-null one of a
// nullable pair, "object" for properties without a type; "" otherwise.
func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		var named []string
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				named = append(named, s)
			}
		}
		if len(named) == 1 {
			return named[0]
		}
		if len(named) == 2 && (named[0] == "integer" && named[1] == "number" || named[0] == "number" && named[1] == "integer") {
			return "number"
		}
	case nil:
		if _, ok := schema["properties"].(map[string]any); ok {
			return "object"
		}
	}
	return ""
}

// Group names of one step's read.
const (
	groupRun      = "run"
	scenarioGroup = "s:"
	timeGroup     = "t:"
)

// stepRead is one grouped read of a step: some of its groups (the run
// group, scenario groups, time groups) whose traces together stay within
// MaxTraces, with its cells (a cell may be in several reads).
type stepRead struct {
	step   Step
	specs  []Spec
	cells  []Cell
	groups map[string][]string
	ids    []string // the distinct trace ids of the groups
	listed int      // the ids listed over the groups, repeats included
}

// Compute computes the levels' metrics of the steps over the cells'
// traces, for the steps of type invocation and annotation (an input
// cell's trace is a source, not the run's work); cells of other steps,
// and without a trace, are skipped. A step is one grouped read (per 50
// specs) when its traces fit one, else its scenario and time groups are
// spread over several reads. It waits (bounded by Wait) until every trace
// is readable, and fails with a *MissingError naming the cells whose
// traces are not; with ErrTooManyTraces when one group (the run's, with
// Global, or a time bucket) has more than MaxTraces traces.
func (c *Computer) Compute(ctx context.Context, sc scope.Scope, steps []Step, cells []Cell, levels Levels) (Result, error) {
	limit := MaxTraces
	if c.MaxTraces > 0 && c.MaxTraces < limit {
		limit = c.MaxTraces
	}
	reads, err := plan(steps, cells, levels, limit)
	if err != nil {
		return Result{}, err
	}
	res := Result{}
	if levels&Global != 0 {
		res.Global = Data{}
	}
	if levels&PerScenario != 0 {
		res.Scenarios = map[string]Data{}
	}
	if levels&PerTimestamp != 0 {
		res.Temporal = map[time.Time]Data{}
	}
	// Wait first, with the cheap probe, then read each step once. The
	// metrics are computed right after a slice's last cells ran, and their
	// traces are then usually not stored yet (the writer inserts once per
	// flush interval): a full read first came back short and was done
	// again, and a full read (the roll-up over whole stored traces) is the
	// costly part, most of all on a ClickHouse busy with another
	// project's flood (docs/benchmarks.md, "Fairness between projects").
	//
	// When every trace is an earlier run's (a re-run whose cells all
	// reuse earlier ones), they are most likely stored: the reads go
	// first, and only if one comes back short does Compute wait and read
	// again.
	earlier := len(cells) > 0
	for _, cell := range cells {
		earlier = earlier && cell.Earlier
	}
	all := make([]map[string]Group, len(reads))
	readAll := func() error {
		return c.each(ctx, reads, func(ctx context.Context, i int, r *stepRead) (err error) {
			all[i], err = c.read(ctx, sc, r)
			return err
		})
	}
	if earlier {
		if err := readAll(); err != nil {
			return Result{}, err
		}
	}
	if !earlier || short(reads, all) {
		if err := c.waitReadable(ctx, sc, reads); err != nil {
			return Result{}, err
		}
		if err := readAll(); err != nil {
			return Result{}, err
		}
	}
	for i, r := range reads {
		for name, g := range all[i] {
			switch {
			case name == groupRun:
				if res.Global != nil {
					res.Global[r.step.Key] = g.Metrics
				}
			case strings.HasPrefix(name, scenarioGroup):
				id := strings.TrimPrefix(name, scenarioGroup)
				if res.Scenarios[id] == nil {
					res.Scenarios[id] = Data{}
				}
				res.Scenarios[id][r.step.Key] = g.Metrics
			case strings.HasPrefix(name, timeGroup):
				n, _ := strconv.ParseInt(strings.TrimPrefix(name, timeGroup), 10, 64)
				t := time.Unix(0, n).UTC()
				if res.Temporal[t] == nil {
					res.Temporal[t] = Data{}
				}
				res.Temporal[t][r.step.Key] = g.Metrics
			}
		}
	}
	return res, nil
}

// short says whether a read's groups miss a listed trace's root.
func short(reads []*stepRead, got []map[string]Group) bool {
	for i, r := range reads {
		for name, ids := range r.groups {
			if got[i][name].Roots < len(ids) {
				return true
			}
		}
	}
	return false
}

// each runs fn over the reads, Parallel at a time (default 4), and
// returns the first error. A run's steps are read side by side: each
// read waits on its own round trip and ClickHouse query, and a re-run
// whose cells reuse stored traces spends most of its tail on them
// (docs/benchmarks.md, "The same run again").
func (c *Computer) each(ctx context.Context, reads []*stepRead, fn func(ctx context.Context, i int, r *stepRead) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(c.Parallel, 4))
	for i, r := range reads {
		g.Go(func() error { return fn(ctx, i, r) })
	}
	return g.Wait()
}

// read is one step's groups over all its specs, MaxSpecs per call.
func (c *Computer) read(ctx context.Context, sc scope.Scope, r *stepRead) (map[string]Group, error) {
	merged := map[string]Group{}
	for start := 0; start < len(r.specs); start += MaxSpecs {
		chunk := r.specs[start:min(start+MaxSpecs, len(r.specs))]
		got, err := c.Tracing.Groups(ctx, sc, chunk, r.groups)
		if err != nil {
			return nil, fmt.Errorf("metrics of step %s: %w", r.step.Key, err)
		}
		for name, g := range got {
			m := merged[name]
			if m.Metrics == nil {
				m.Metrics = map[string]any{}
			}
			for p, v := range g.Metrics {
				m.Metrics[p] = v
			}
			if start == 0 || g.Roots < m.Roots {
				m.Roots = g.Roots // the least of the reads: all chunks saw the traces
			}
			merged[name] = m
		}
	}
	return merged, nil
}

// plan groups each step's cells per level and packs the groups into
// reads of at most limit distinct traces: the run group first (alone
// if need be), then the time and scenario groups in name order.
func plan(steps []Step, cells []Cell, levels Levels, limit int) ([]*stepRead, error) {
	type stepCells struct {
		step  Step
		cells []Cell
	}
	byKey := map[string]*stepCells{}
	var order []*stepCells
	for _, s := range steps {
		if s.Type != "invocation" && s.Type != "annotation" {
			continue
		}
		if _, dup := byKey[s.Key]; dup {
			continue
		}
		sc := &stepCells{step: s}
		byKey[s.Key] = sc
		order = append(order, sc)
	}
	for _, cell := range cells {
		if sc := byKey[cell.StepKey]; sc != nil && cell.TraceID != "" {
			cell.TraceID = strings.ToLower(cell.TraceID)
			sc.cells = append(sc.cells, cell)
		}
	}
	var reads []*stepRead
	for _, sc := range order {
		groups := map[string][]string{}
		members := map[string][]Cell{} // the cells behind each group
		add := func(name string, cell Cell) {
			groups[name] = append(groups[name], cell.TraceID)
			members[name] = append(members[name], cell)
		}
		if levels&Global != 0 {
			groups[groupRun] = []string{} // a step without cells still has (empty) run metrics
		}
		for _, cell := range sc.cells {
			if levels&Global != 0 {
				add(groupRun, cell)
			}
			if levels&PerScenario != 0 && cell.ScenarioID != "" {
				add(scenarioGroup+cell.ScenarioID, cell)
			}
			if levels&PerTimestamp != 0 && cell.Timestamp != nil {
				add(timeGroup+strconv.FormatInt(cell.Timestamp.UnixNano(), 10), cell)
			}
		}
		names := make([]string, 0, len(groups))
		for name := range groups {
			if name != groupRun {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		if _, ok := groups[groupRun]; ok {
			names = append([]string{groupRun}, names...)
		}
		specs := Specs(sc.step)
		var cur *stepRead
		var curIDs map[string]bool
		for _, name := range names {
			distinct := map[string]bool{}
			for _, id := range groups[name] {
				distinct[id] = true
			}
			if len(distinct) > limit {
				return nil, fmt.Errorf("step %s, group %s, %d traces: %w", sc.step.Key, name, len(distinct), ErrTooManyTraces)
			}
			fresh := 0
			for id := range distinct {
				if cur == nil || !curIDs[id] {
					fresh++
				}
			}
			if cur == nil || len(curIDs)+fresh > limit {
				cur = &stepRead{step: sc.step, specs: specs, groups: map[string][]string{}}
				curIDs = map[string]bool{}
				reads = append(reads, cur)
			}
			cur.groups[name] = groups[name]
			cur.listed += len(groups[name])
			for id := range distinct {
				if !curIDs[id] {
					curIDs[id] = true
					cur.ids = append(cur.ids, id)
				}
			}
			cur.cells = append(cur.cells, members[name]...)
		}
	}
	return reads, nil
}

// waitReadable reads each read's traces with the cheapest spec until all
// have their root, or Wait passes; it then names the missing cells, found
// with one group per trace.
func (c *Computer) waitReadable(ctx context.Context, sc scope.Scope, reads []*stepRead) error {
	wait, poll := c.Wait, c.Poll
	if wait <= 0 {
		wait = 30 * time.Second
	}
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	probe := []Spec{{Type: "string", Path: "span_name"}}
	deadline := time.Now().Add(wait)
	pending := reads
	// The pauses grow from an eighth of poll: traces are usually stored
	// within a writer flush interval, and a short first pause notices them
	// soon after, where a whole poll would add up to its length to every
	// run's status; a probe is cheap (no roll-up).
	pause := max(poll/8, 10*time.Millisecond)
	for {
		short := make([]bool, len(pending))
		if err := c.each(ctx, pending, func(ctx context.Context, i int, r *stepRead) error {
			if len(r.ids) == 0 {
				return nil
			}
			got, err := c.Tracing.Groups(ctx, sc, probe, map[string][]string{groupRun: r.ids})
			if err != nil {
				return fmt.Errorf("metrics of step %s: %w", r.step.Key, err)
			}
			short[i] = got[groupRun].Roots < len(r.ids)
			return nil
		}); err != nil {
			return err
		}
		var still []*stepRead
		for i, r := range pending {
			if short[i] {
				still = append(still, r)
			}
		}
		if len(still) == 0 {
			return nil
		}
		pending = still
		if time.Now().Add(pause).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, poll)
	}
	missing := &MissingError{Wait: wait}
	seen := map[Cell]bool{}
	for _, r := range pending {
		groups := make(map[string][]string, len(r.ids))
		for _, id := range r.ids {
			groups[id] = []string{id}
		}
		got, err := c.Tracing.Groups(ctx, sc, probe, groups)
		if err != nil {
			return fmt.Errorf("metrics of step %s: %w", r.step.Key, err)
		}
		for _, cell := range r.cells {
			key := Cell{ScenarioID: cell.ScenarioID, StepKey: cell.StepKey, TraceID: cell.TraceID}
			if got[cell.TraceID].Roots == 0 && !seen[key] {
				seen[key] = true
				missing.Cells = append(missing.Cells, cell)
			}
		}
	}
	return missing
}
