package query

import (
	"context"
	"fmt"
	"sort"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Grouped analytics: the statistics of Analytics over named groups of
// traces instead of time buckets. The evaluation worker asks for a run's
// metrics (services/runtime/internal/evalmetrics) this way: one group per step for the
// whole run, one per scenario, one per time bucket, all answered by one
// ClickHouse read of the listed traces' root spans.

// MaxGroupTraces bounds the distinct trace ids of one grouped request: the
// ids are written into the statement (twice when a cumulative metric needs
// the roll-up), and every root span read is held here to compute exact
// percentiles. A trace listed in several groups counts once.
const MaxGroupTraces = 10000

// MaxGroupMembers bounds the ids listed over all groups, repeats included
// (a trace in its step's run group, its scenario's and its time bucket's
// is listed three times): the work of sorting rows into groups.
const MaxGroupMembers = 5 * MaxGroupTraces

// maxGroupName bounds a group's name (a step key, a scenario id, ...).
const maxGroupName = 256

// GroupsRequest is a parsed grouped analytics request: the specs (the
// defaults when empty) and the trace ids of each named group.
type GroupsRequest struct {
	Specs  []MetricSpec
	Groups map[string][]string
}

// Group is one group's answer: its metrics keyed by spec path, shaped as
// an analytics bucket's, and the number of its listed trace ids whose root
// span was read (fewer than listed while the writer has not stored them
// all). A trace listed n times in a group counts n times, in roots and in
// the metrics.
type Group struct {
	Metrics map[string]any `json:"metrics"`
	Roots   int            `json:"roots"`
}

// Check validates r and normalises its trace ids (lowercase hex; a UUID
// form is accepted as everywhere else); errors name the field.
func (r *GroupsRequest) Check() error {
	if err := CheckSpecs(r.Specs, "specs"); err != nil {
		return err
	}
	if len(r.Groups) == 0 {
		return groupsInvalid("groups", "at least one group of trace ids is required")
	}
	distinct := map[string]bool{}
	members := 0
	for name, ids := range r.Groups {
		if name == "" || len(name) > maxGroupName {
			return groupsInvalid("groups", fmt.Sprintf("a group name must be 1 to %d bytes, got %d", maxGroupName, len(name)))
		}
		members += len(ids)
		if members > MaxGroupMembers {
			return groupsInvalid("groups", fmt.Sprintf("more than %d trace ids are listed over all groups (the limit, repeats included)", MaxGroupMembers))
		}
		for i, id := range ids {
			norm, err := spanmodel.TraceID(id)
			if err != nil {
				return groupsInvalid(fmt.Sprintf("groups.%s[%d]", name, i), err.Error())
			}
			ids[i] = norm
			distinct[norm] = true
		}
	}
	if len(distinct) > MaxGroupTraces {
		return groupsInvalid("groups", fmt.Sprintf("%d distinct trace ids is over the limit of %d per request", len(distinct), MaxGroupTraces))
	}
	return nil
}

func groupsInvalid(field, msg string) error {
	msg = field + ": " + msg
	return errs.WithDetail(errs.Invalid, "tracing.invalid_groups", msg, msg)
}

// Groups computes each group's statistics over the root spans of its
// traces, exactly as Analytics computes a bucket's (the same value
// expressions, the same roll-up of cumulative metrics over the whole
// stored trace, the same stats), with one statement for all groups. It
// does not look at ingest time: a trace counts whenever it was stored.
// req is checked here (Check) so no caller can skip the bounds.
func (s *Service) Groups(ctx context.Context, project string, req GroupsRequest) (map[string]Group, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	specs := req.Specs
	if len(specs) == 0 {
		specs = DefaultSpecs()
	}
	c := &compiler{lim: s.store.limits.Filter, aliasPrefix: "_m"}
	cols, err := specColumns(c, specs)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, list := range req.Groups {
		for _, id := range list {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids) // a stable statement for the same request
	where := "parent_id = '' AND " + inList("trace_id", ids)
	j := joinClause{}
	if c.rollup {
		sql, jargs := rollupJoin(inList("trace_id", ids), anys(ids))
		j = joinClause{sql: sql, args: jargs}
	}
	rows, err := s.store.values(ctx, project, j, cols, c.args, where, anys(ids))
	if err != nil {
		return nil, err
	}
	byTrace := make(map[string][]valueRow, len(rows))
	for _, r := range rows {
		byTrace[r.trace] = append(byTrace[r.trace], r)
	}
	out := make(map[string]Group, len(req.Groups))
	for name, list := range req.Groups {
		var in []valueRow
		roots := 0
		for _, id := range list {
			// A trace listed twice counts twice: two evaluation cells
			// may hold one trace (a cache hit reuses it).
			if rs := byTrace[id]; len(rs) > 0 {
				roots++
				in = append(in, rs...)
			}
		}
		out[name] = Group{Metrics: metricsOf(specs, in), Roots: roots}
	}
	return out, nil
}
