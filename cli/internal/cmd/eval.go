package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/cli/internal/gate"
	"github.com/assayhq/assay/cli/internal/output"
	"github.com/assayhq/assay/cli/internal/progress"
)

func (a *app) evalCmd() *cobra.Command {
	ev := group("eval", "Run evaluations, gate CI on their metrics, compare runs", "evaluations")
	ev.AddCommand(a.evalRun(), a.evalCompare(), a.evalShow())
	return ev
}

// terminal run statuses: the run will not change any more by itself.
var terminal = map[string]bool{"success": true, "failure": true, "errors": true, "cancelled": true}

type progressBody struct {
	RunID     string         `json:"run_id"`
	Status    string         `json:"status"`
	Scenarios map[string]int `json:"scenarios"`
	Results   map[string]int `json:"results"`
	// Waiting lists the provider rate limits the run's cells are queued
	// behind now.
	Waiting []struct {
		Provider string    `json:"provider"`
		Until    time.Time `json:"until"`
	} `json:"waiting"`
	// Pause is why a live run scores nothing for now though it is
	// running (the run's meta.pause.message: its daily budget reached),
	// read from the run, not the progress; "" when it is not paused.
	Pause string `json:"-"`
}

// line is the progress line of p: status, cells done of total, counts,
// and the provider limits the run waits on.
func (p progressBody) line(done, total int64) string {
	out := fmt.Sprintf("%s  cells %d/%d  %s", p.Status, done, total, counts(p.Results))
	if len(p.Waiting) > 0 {
		names := make([]string, len(p.Waiting))
		for i, w := range p.Waiting {
			names[i] = w.Provider
		}
		out += "  waiting on the rate limit of " + strings.Join(names, ", ")
	}
	return out
}

type evalRunOpts struct {
	testset, app, name string
	evaluators         []string
	repeats            int
	budget             float64
	failUnder          []string
	baseline           string
	againstItself      bool
	junit, summary     string
	wait, poll         time.Duration
	metricsWait        time.Duration
}

func (a *app) evalRun() *cobra.Command {
	var o evalRunOpts
	c := &cobra.Command{
		Use:   "run --testset TESTSET --app APP --evaluator EVALUATOR [--evaluator …]",
		Short: "Run an evaluation, follow its progress, print its metrics and apply the gates",
		Long: `Creates a simple evaluation (POST /api/simple/evaluations/) of the testset's
revision through the application's revision and each evaluator (run by the
platform: origin auto), follows GET /api/evaluations/runs/{id}/progress (a
bar of cells by status on a terminal, a line every few seconds otherwise),
then prints the run's global metrics, one per evaluator output and the
defaults (duration, cost, tokens, errors), named <slug>.<leaf> after the
evaluator or application the step runs: exact_match.success,
capitals.metrics.duration.cumulative.

TESTSET, APP and EVALUATOR are slugs (the latest revision), ids, or
SLUG@VERSION.

Gates (exit 3 when one fails):
  --fail-under 'exact_match.success>=0.9'   a threshold (repeatable; a metric
                                            the run lacks fails its gate)
  --baseline RUN   every evaluator output shared with RUN must not be worse
                   than RUN's by more than the 95% confidence interval of the
                   difference (higher is better, lower for metrics gated
                   with < or <=). It fails on a "regressed" verdict: the
                   delta's Holm-adjusted p-value is below 0.05 over all the
                   metrics compared at once (docs/cli.md)
  --against-itself runs the evaluation twice (every model call made, no
                   model-call cache) and gates the second run against the
                   first: the same revision against itself shows the noise (every verdict should be inconclusive;
                   the intervals are the noise, and the comparison's table
                   says how many testcases a difference needs)
--junit FILE writes the gates as JUnit XML; --summary FILE a Markdown summary
(e.g. $GITHUB_STEP_SUMMARY). A run that ends in failure or errors exits 1.

--budget USD caps what the run's model calls may cost (by the price table):
once reached the platform cancels the run, and the command exits 1 naming
the budget ("budget of $0.50 reached: $0.52 spent").`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runEval(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.testset, "testset", "", "testset (slug, id or SLUG@VERSION)")
	f.StringVar(&o.app, "app", "", "application (slug, id or SLUG@VERSION)")
	f.StringArrayVar(&o.evaluators, "evaluator", nil, "evaluator (slug, id or SLUG@VERSION; repeatable)")
	f.StringVar(&o.name, "name", "", "name of the evaluation (default: assay eval <app> on <testset>)")
	f.IntVar(&o.repeats, "repeats", 0, "repeats of each evaluator per testcase (default the server's: 1)")
	f.Float64Var(&o.budget, "budget", 0, "most the run's model calls may cost, in USD (default: no budget)")
	f.StringArrayVar(&o.failUnder, "fail-under", nil, "gate METRIC OP NUMBER, e.g. 'exact_match.success>=0.9' (repeatable)")
	f.StringVar(&o.baseline, "baseline", "", "a run id to compare with: fail when worse beyond the confidence interval")
	f.BoolVar(&o.againstItself, "against-itself", false, "run twice and gate the second run against the first, to show the noise")
	f.StringVar(&o.junit, "junit", "", "write the gates as JUnit XML to this file")
	f.StringVar(&o.summary, "summary", "", "write a Markdown summary to this file (appended)")
	f.DurationVar(&o.wait, "timeout", 30*time.Minute, "give up waiting for the run after this long (exit 1)")
	f.DurationVar(&o.poll, "poll", time.Second, "time between progress polls")
	f.DurationVar(&o.metricsWait, "metrics-timeout", 2*time.Minute, "how long to wait for the run's metrics once it ended")
	c.MarkFlagRequired("testset")
	c.MarkFlagRequired("app")
	c.MarkFlagRequired("evaluator")
	return c
}

func (a *app) runEval(ctx context.Context, o evalRunOpts) error {
	var thresholds []gate.Threshold
	lowerBetter := map[string]bool{}
	for _, s := range o.failUnder {
		for _, part := range strings.Split(s, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			t, err := gate.ParseThreshold(part)
			if err != nil {
				return usagef("--fail-under: %v", err)
			}
			thresholds = append(thresholds, t)
			if t.Op == "<" || t.Op == "<=" {
				lowerBetter[t.Name] = true
			}
		}
	}
	if o.againstItself && o.baseline != "" {
		return usagef("--against-itself is its own baseline: drop --baseline")
	}
	cl, err := a.client()
	if err != nil {
		return err
	}
	// The baseline is read first: a typo in its id should fail before an
	// evaluation is paid for.
	var baseMetrics []gate.Metric
	if o.baseline != "" {
		if _, err := getRun(ctx, cl, o.baseline); err != nil {
			return err
		}
		if baseMetrics, err = globalMetrics(ctx, cl, o.baseline, 0); err != nil {
			return err
		}
	}
	ts, err := retrieveRevision(ctx, cl, "testset", o.testset)
	if err != nil {
		return err
	}
	ap, err := retrieveRevision(ctx, cl, "application", o.app)
	if err != nil {
		return err
	}
	evaluators := gen.SimpleDataEvaluatorSteps{}
	for _, e := range o.evaluators {
		rev, err := retrieveRevision(ctx, cl, "evaluator", e)
		if err != nil {
			return err
		}
		evaluators[str(rev, "id")] = "auto"
	}
	name := first(o.name, fmt.Sprintf("assay eval %s on %s", o.app, o.testset))
	// The testset and application steps are custom: what the registry
	// reads from a list of ids there (ParseStepRefs in
	// services/registry/internal/evaluations/pin.go), which the CLI sent
	// before the document's map form.
	data := gen.SimpleData{
		TestsetSteps:     gen.NewOptSimpleDataTestsetSteps(gen.SimpleDataTestsetSteps{str(ts, "id"): "custom"}),
		ApplicationSteps: gen.NewOptSimpleDataApplicationSteps(gen.SimpleDataApplicationSteps{str(ap, "id"): "custom"}),
		EvaluatorSteps:   gen.NewOptSimpleDataEvaluatorSteps(evaluators),
	}
	if o.repeats > 0 {
		data.Repeats = gen.NewOptInt(o.repeats)
	}
	if o.budget > 0 {
		data.Budget = gen.NewOptFloat64(o.budget)
	}
	if o.againstItself {
		// The first run of the revision is the baseline of the second:
		// the comparison of the two is the noise of the application
		// and evaluators on this testset. Neither run is answered from
		// the model-call cache (model_cache: false; a registry without
		// the cache ignores the field), else the second would repeat
		// the first's answers and show no noise at all.
		data.ModelCache = gen.NewOptBool(false)
		baseID, prog, err := a.startEval(ctx, cl, name+" (baseline)", data, o)
		if err != nil {
			return err
		}
		if prog.Status == "failure" || prog.Status == "errors" {
			a.printFailedCells(ctx, cl, baseID, prog)
			return api.Errorf(api.ExitError, "run %s ended with status %s (%s)", baseID, prog.Status, counts(prog.Scenarios))
		}
		if baseMetrics, err = globalMetrics(ctx, cl, baseID, o.metricsWait); err != nil {
			return err
		}
		o.baseline = baseID
	}
	runID, prog, err := a.startEval(ctx, cl, name, data, o)
	if err != nil {
		return err
	}
	if prog.Status == "cancelled" {
		// A run cancelled by its budget (or by someone) has no complete
		// metrics to gate on: the reason is the error.
		why := "stopped"
		if run, err := getRun(ctx, cl, runID); err == nil && stopReason(run) != "" {
			why = stopReason(run)
		}
		return api.Errorf(api.ExitError, "run %s was cancelled: %s (%s)", runID, why, counts(prog.Scenarios))
	}
	metrics, err := globalMetrics(ctx, cl, runID, o.metricsWait)
	if err != nil {
		return err
	}
	checks := gate.Thresholds(metrics, thresholds)
	if o.baseline != "" {
		// The comparison's intervals are paired over the testcases both
		// runs share, tighter and truer than one from two global means;
		// over different testset revisions (409) or on a platform without
		// the route, the global metrics' normal approximation stands in.
		cmp, _, err := compare(ctx, cl, []string{o.baseline, runID})
		switch {
		case err == nil:
			base, err := getRun(ctx, cl, o.baseline)
			if err != nil {
				return err
			}
			checks = append(checks, baselineFromComparison(cmp, o.baseline, metrics, baseMetrics, stepNames(base), lowerBetter)...)
		case api.StatusOf(err) == 404 || api.StatusOf(err) == 405 || api.StatusOf(err) == 409 || api.StatusOf(err) == 422:
			checks = append(checks, gate.Baseline(metrics, baseMetrics, o.baseline, lowerBetter)...)
		default:
			return err
		}
	}
	if err := a.printMetrics(runID, prog, metrics, checks); err != nil {
		return err
	}
	if o.junit != "" {
		if err := writeFile(o.junit, func(f *os.File) error { return gate.JUnit(f, junitSuite(o), checks) }, false); err != nil {
			return err
		}
	}
	if o.summary != "" {
		facts := [][2]string{{"run", runID}, {"status", prog.Status}, {"testset", o.testset}, {"application", o.app},
			{"evaluators", strings.Join(o.evaluators, ", ")}, {"scenarios", counts(prog.Scenarios)}}
		if o.baseline != "" {
			facts = append(facts, [2]string{"baseline", o.baseline})
		}
		if err := writeFile(o.summary, func(f *os.File) error {
			return gate.Markdown(f, "Assay evaluation: "+name, facts, metrics, checks)
		}, true); err != nil {
			return err
		}
	}
	if prog.Status == "failure" || prog.Status == "errors" {
		// Exit 1 alone leaves a CI log with nothing to act on: the cells'
		// own errors say what to fix (a missing column, a refused key).
		a.printFailedCells(ctx, cl, runID, prog)
		return api.Errorf(api.ExitError, "run %s ended with status %s (%s)", runID, prog.Status, counts(prog.Scenarios))
	}
	if gate.Failed(checks) {
		n := 0
		for _, c := range checks {
			if !c.Passed {
				n++
			}
		}
		return api.Errorf(api.ExitGate, "%d of %d gates failed", n, len(checks))
	}
	return nil
}

// startEval creates a simple evaluation named name over data and follows
// it to its end.
func (a *app) startEval(ctx context.Context, cl *api.Client, name string, data gen.SimpleData, o evalRunOpts) (string, progressBody, error) {
	var created struct {
		Count      int `json:"count"`
		Evaluation obj `json:"evaluation"`
	}
	req := gen.PostSimpleEvaluationsReq{Evaluation: gen.NewOptSimpleEvaluation(gen.SimpleEvaluation{Name: gen.NewOptString(name), Data: gen.NewOptSimpleData(data)})}
	if err := cl.JSON(ctx, "POST", "/api/simple/evaluations/", &req, &created); err != nil {
		return "", progressBody{}, err
	}
	if created.Count == 0 || created.Evaluation == nil {
		return "", progressBody{}, api.Errorf(api.ExitError, "the server could not set up the evaluation (count 0): check that the testset has rows and the application and evaluators run")
	}
	runID := first(str(created.Evaluation, "run_id"), str(created.Evaluation, "id"))
	fmt.Fprintf(a.stderr, "evaluation %s: run %s\n", name, runID)
	prog, err := a.follow(ctx, cl, runID, o)
	return runID, prog, err
}

// shownFailures is how many distinct errors a run that ended badly prints
// (cells failing the same way are one line with their count); readFailures
// is how many failed cells are read to group them.
const (
	shownFailures = 5
	readFailures  = 200
)

// printFailedCells prints the errors of the run's failed cells, grouped by
// step and message, and a count of the cells not shown, to standard error.
// It is best effort: the run's status is the error either way, so a failed
// query only loses the detail.
func (a *app) printFailedCells(ctx context.Context, cl *api.Client, runID string, p progressBody) {
	total := p.Results["failure"] + p.Results["errors"]
	var out struct {
		Results []obj `json:"results"`
	}
	body := obj{"result": obj{"run_id": runID, "statuses": []string{"failure", "errors"}}, "windowing": obj{"limit": readFailures}}
	if err := cl.JSON(ctx, "POST", "/api/evaluations/results/query", body, &out); err != nil {
		fmt.Fprintf(a.stderr, "could not read the failed cells of run %s: %v\n", runID, err)
		return
	}
	names := map[string]string{}
	if run, err := getRun(ctx, cl, runID); err == nil {
		names = stepNames(run)
	}
	type group struct {
		step, msg string
		n         int
	}
	var groups []*group
	seen := map[[2]string]*group{}
	for _, r := range out.Results {
		k := [2]string{first(names[str(r, "step_key")], str(r, "step_key")), cellError(r["error"])}
		if g := seen[k]; g != nil {
			g.n++
			continue
		}
		g := &group{step: k[0], msg: k[1], n: 1}
		seen[k] = g
		groups = append(groups, g)
	}
	shown := 0
	for i, g := range groups {
		if i == shownFailures {
			break
		}
		cells := "1 cell"
		if g.n > 1 {
			cells = fmt.Sprintf("%d cells", g.n)
		}
		fmt.Fprintf(a.stderr, "failed: %s (%s): %s\n", g.step, cells, g.msg)
		shown += g.n
	}
	if total < len(out.Results) {
		total = len(out.Results)
	}
	if rest := total - shown; rest > 0 {
		fmt.Fprintf(a.stderr, "… and %d more failed cells (the run's results in the console, or POST /api/evaluations/results/query)\n", rest)
	}
}

// cellError is a result's error message, or its JSON when it has none.
func cellError(e any) string {
	if m, ok := e.(map[string]any); ok {
		if msg, ok := m["message"].(string); ok && msg != "" {
			return msg
		}
	}
	if e == nil {
		return "(no error recorded)"
	}
	b, _ := json.Marshal(e)
	return string(b)
}

// junitSuite names the JUnit suite: the --name given, else what was run on
// what. The evaluation's default name already starts with "assay eval", so
// prefixing it again read "assay eval assay eval …" in CI reports.
func junitSuite(o evalRunOpts) string {
	if o.name != "" {
		return o.name
	}
	return fmt.Sprintf("assay eval %s × %s", o.testset, o.app)
}

// follow polls the run's progress until it ends, drawing cells by status.
func (a *app) follow(ctx context.Context, cl *api.Client, runID string, o evalRunOpts) (progressBody, error) {
	bar := progress.New(a.stderr, "run "+short(runID), 5*time.Second)
	deadline := time.Now().Add(o.wait)
	var p progressBody
	for {
		var out struct {
			Count    int          `json:"count"`
			Progress progressBody `json:"progress"`
		}
		if err := cl.JSON(ctx, "GET", "/api/evaluations/runs/"+pathEscape(runID)+"/progress", nil, &out); err != nil {
			return p, err
		}
		if out.Count == 0 {
			return p, api.NotFound("no run %s in this project", runID)
		}
		p = out.Progress
		total := int64(first2(p.Results["expected"], p.Results["total"]))
		done := int64(0)
		for st, n := range p.Results {
			if terminal[st] {
				done += int64(n)
			}
		}
		if total == 0 {
			bar.Update(0, 0, fmt.Sprintf("%s  waiting for scenarios", p.Status))
		} else {
			bar.Update(done, total, p.line(done, total))
		}
		if terminal[p.Status] {
			bar.Done(p.line(done, total))
			return p, nil
		}
		if time.Now().After(deadline) {
			bar.Done("timed out")
			return p, api.Errorf(api.ExitError, "run %s still %s after %s (--timeout)", runID, p.Status, o.wait)
		}
		select {
		case <-ctx.Done():
			bar.Done("interrupted")
			return p, api.Errorf(api.ExitError, "interrupted: run %s goes on on the server (assay eval show %s)", runID, runID)
		case <-time.After(o.poll):
		}
	}
}

func first2(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// counts renders {status: n} as "success 3, running 1" (total last).
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "total" && k != "expected" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if t, ok := m["total"]; ok {
		parts = append(parts, fmt.Sprintf("total %d", t))
	}
	return strings.Join(parts, ", ")
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// stopReason is why a run was stopped by the platform (meta.stop.message:
// its budget reached), or "".
func stopReason(run obj) string {
	return str(run, "meta", "stop", "message")
}

// pauseReason is why a live, active run scores nothing for now
// (meta.pause.message: its daily budget reached; the runtime clears it
// the next day), or "". A stopped run is not paused: stopped says more.
func pauseReason(run obj) string {
	if sub(run, "flags")["is_live"] != true || sub(run, "flags")["is_active"] != true {
		return ""
	}
	return str(run, "meta", "pause", "message")
}

func getRun(ctx context.Context, cl *api.Client, id string) (obj, error) {
	var out obj
	if err := cl.JSON(ctx, "GET", "/api/evaluations/runs/"+pathEscape(id), nil, &out); err != nil {
		if api.CodeOf(err) == api.ExitNotFound {
			return nil, api.NotFound("no run %s in this project", id)
		}
		return nil, err
	}
	if count(out) == 0 {
		return nil, api.NotFound("no run %s in this project", id)
	}
	return sub(out, "run"), nil
}

// globalMetrics reads the run's global metric (no scenario, no timestamp),
// waiting up to wait for it to be stored (the worker writes it after the
// last cell).
func globalMetrics(ctx context.Context, cl *api.Client, runID string, wait time.Duration) ([]gate.Metric, error) {
	run, err := getRun(ctx, cl, runID)
	if err != nil {
		return nil, err
	}
	names := stepNames(run)
	deadline := time.Now().Add(wait)
	for {
		m, err := findGlobal(ctx, cl, runID)
		if err != nil {
			return nil, err
		}
		if m != nil {
			return gate.FromData(sub(m, "data"), names), nil
		}
		if !time.Now().Before(deadline) {
			if wait == 0 {
				return nil, api.NotFound("run %s has no global metrics", runID)
			}
			return nil, api.Errorf(api.ExitError, "run %s has no global metrics after %s", runID, wait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// findGlobal pages through the run's metrics (a run has one per scenario
// too, and the query has no filter for the global one) and returns the
// global metric, or nil.
func findGlobal(ctx context.Context, cl *api.Client, runID string) (obj, error) {
	body := obj{"metric": obj{"run_ids": []string{runID}}, "windowing": obj{"limit": 1000}}
	for page := 0; page < 100; page++ {
		var out struct {
			Metrics   []obj `json:"metrics"`
			Windowing obj   `json:"windowing"`
		}
		if err := cl.JSON(ctx, "POST", "/api/evaluations/metrics/query", body, &out); err != nil {
			return nil, err
		}
		for _, m := range out.Metrics {
			if m["scenario_id"] == nil && m["timestamp"] == nil && str(m, "run_id") == runID {
				return m, nil
			}
		}
		if len(out.Metrics) == 0 || out.Windowing == nil || out.Windowing["next"] == nil {
			return nil, nil
		}
		body["windowing"] = out.Windowing
	}
	return nil, nil
}

// stepNames maps each step key of a run to the slug of what the step runs
// (its evaluator, application, testset or query), so metrics are named
// exact_match.success whatever the step key is made of.
func stepNames(run obj) map[string]string {
	names := map[string]string{}
	steps, _ := sub(run, "data")["steps"].([]any)
	for _, st := range steps {
		step, _ := st.(map[string]any)
		key := str(step, "key")
		for _, kind := range []string{"evaluator", "application", "testset", "query"} {
			if slug := str(step, "references", kind, "slug"); slug != "" && key != "" {
				names[key] = slug
				break
			}
		}
	}
	return names
}

func (a *app) printMetrics(runID string, p progressBody, ms []gate.Metric, checks []gate.Check) error {
	t := output.Table{Header: []string{"metric", "type", "n", "value", "min", "max"}}
	raw := obj{"run_id": runID, "status": p.Status, "scenarios": p.Scenarios, "results": p.Results}
	if p.Pause != "" {
		raw["pause"] = p.Pause
	}
	var rawMetrics []obj
	for _, m := range ms {
		val, lo, hi := "", "", ""
		if m.HasValue {
			val = output.Num(m.Value)
		}
		if m.Min != nil {
			lo = output.Num(*m.Min)
		}
		if m.Max != nil {
			hi = output.Num(*m.Max)
		}
		t.Rows = append(t.Rows, []string{m.Name, m.Type, fmt.Sprint(m.Count), val, lo, hi})
		rm := obj{"name": m.Name, "step_key": m.StepKey, "path": m.Path, "type": m.Type, "count": m.Count, "min": m.Min, "max": m.Max}
		if m.HasValue {
			rm["value"] = m.Value
		}
		rawMetrics = append(rawMetrics, rm)
	}
	raw["metrics"] = rawMetrics
	var rawChecks []obj
	for _, c := range checks {
		rawChecks = append(rawChecks, obj{"gate": c.Name, "kind": c.Kind, "passed": c.Passed, "message": c.Message})
	}
	raw["gates"] = rawChecks
	t.Raw = raw
	if err := a.write(t); err != nil {
		return err
	}
	if a.out == "table" && len(checks) > 0 {
		fmt.Fprintln(a.stdout)
		gt := output.Table{Header: []string{"gate", "result", "detail"}}
		for _, c := range checks {
			r := "pass"
			if !c.Passed {
				r = "FAIL"
			}
			gt.Rows = append(gt.Rows, []string{c.Name, r, c.Message})
		}
		return output.Write(a.stdout, "table", gt)
	}
	return nil
}

// writeFile writes (or appends to) a report file.
func writeFile(path string, fill func(*os.File) error, appendTo bool) error {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (a *app) evalShow() *cobra.Command {
	return &cobra.Command{
		Use: "show RUN", Short: "Show a run's progress and global metrics", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var out struct {
				Count    int          `json:"count"`
				Progress progressBody `json:"progress"`
			}
			if err := cl.JSON(c.Context(), "GET", "/api/evaluations/runs/"+pathEscape(args[0])+"/progress", nil, &out); err != nil {
				return err
			}
			if out.Count == 0 {
				return api.NotFound("no run %s in this project", args[0])
			}
			if out.Progress.Status == "cancelled" {
				if run, err := getRun(c.Context(), cl, args[0]); err == nil && stopReason(run) != "" {
					fmt.Fprintf(a.stderr, "run %s was cancelled: %s\n", args[0], stopReason(run))
				}
			}
			// A live run paused on its daily budget still reads running:
			// say it scores nothing for now, and why.
			if out.Progress.Status == "running" {
				if run, err := getRun(c.Context(), cl, args[0]); err == nil && pauseReason(run) != "" {
					out.Progress.Pause = pauseReason(run)
					fmt.Fprintf(a.stderr, "run %s is running, paused: %s\n", args[0], out.Progress.Pause)
				}
			}
			ms, err := globalMetrics(c.Context(), cl, args[0], 0)
			if err != nil && api.CodeOf(err) != api.ExitNotFound {
				return err
			}
			return a.printMetrics(args[0], out.Progress, ms, nil)
		},
	}
}

func (a *app) evalCompare() *cobra.Command {
	return &cobra.Command{
		Use:   "compare RUN RUN [RUN…]",
		Short: "Compare runs over the same testset: each metric side by side with its delta and confidence interval",
		Long: `Calls POST /api/evaluations/runs/compare {run_ids} (runs over the same testset
revision) and prints, per metric, each run's mean over its scenarios and the
delta against the first run with its 95% confidence interval (paired over the
shared testcases, else Welch's). --output json prints the server's answer.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			cmp, raw, err := compare(c.Context(), cl, args)
			if err != nil {
				return err
			}
			if a.out == "json" {
				return output.JSON(a.stdout, raw)
			}
			first, err := getRun(c.Context(), cl, args[0])
			if err != nil {
				return err
			}
			return a.write(compareTable(cmp, raw, stepNames(first)))
		},
	}
}
