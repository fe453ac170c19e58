package evalrun

import (
	"testing"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/stretchr/testify/assert"
)

// TestSchedIsFairBetweenProjectsAndRuns: within a project, the run with
// fewer jobs running goes first; the last free slot is kept for a project
// running nothing, so another project's job starts at once behind a
// queued flood; a project never runs more than its cap.
func TestSchedIsFairBetweenProjectsAndRuns(t *testing.T) {
	add := func(q *sched, project, run string) {
		q.add(&waitingJob{job: evaluation.Job{ProjectID: project, RunID: run}})
	}
	startAll := func(q *sched) []string {
		var out []string
		for w := q.next(); w != nil; w = q.next() {
			out = append(out, w.job.ProjectID+"/"+w.job.RunID)
		}
		return out
	}
	q := &sched{jobs: 4, keep: true, byProject: map[string]int{}, byRun: map[string]int{}}
	for range 3 {
		add(q, "flood", "f1")
	}
	add(q, "flood", "f2")
	// f1 (the oldest), f2 (its run runs nothing), f1; the fourth slot
	// waits for a project running nothing.
	assert.Equal(t, []string{"flood/f1", "flood/f2", "flood/f1"}, startAll(q))
	add(q, "small", "s1")
	assert.Equal(t, []string{"small/s1"}, startAll(q), "the kept slot")
	assert.Empty(t, startAll(q), "every slot busy")
	// A flood job ends: its free slot is again the last one, kept for a
	// project running nothing; another one comes and takes it.
	q.done(&waitingJob{job: evaluation.Job{ProjectID: "flood", RunID: "f1"}})
	assert.Empty(t, startAll(q))
	add(q, "other", "o1")
	assert.Equal(t, []string{"other/o1"}, startAll(q))

	// A cap of 1 per project: two projects' floods take one slot each.
	q = &sched{jobs: 4, perProject: 1, keep: true, byProject: map[string]int{}, byRun: map[string]int{}}
	for range 3 {
		add(q, "a", "a1")
		add(q, "b", "b1")
	}
	assert.Equal(t, []string{"a/a1", "b/b1"}, startAll(q))
	add(q, "c", "c1")
	add(q, "d", "d1")
	assert.Equal(t, []string{"c/c1", "d/d1"}, startAll(q), "projects running nothing start")

	// Without a lookahead (keep false): first in, first out on every slot.
	q = &sched{jobs: 2, byProject: map[string]int{}, byRun: map[string]int{}}
	add(q, "a", "a1")
	add(q, "a", "a1")
	add(q, "b", "b1")
	assert.Equal(t, []string{"a/a1", "b/b1"}, startAll(q))
}
