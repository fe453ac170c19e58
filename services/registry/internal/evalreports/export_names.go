package evalreports

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// A CSV export is read by people in a spreadsheet, so its headers name
// each step by the slug of what it references (the evaluator, the
// application, the testset) and each metric by its leaf:
// "capital-exact.success", "capitals-bot.duration", "capital-exact.status"
// rather than "evaluator-64e6a4c031c3/attributes.ag.data.outputs.success"
// (the step key the compatible SDKs build from the revision's generated
// slug). The JSON export keeps the step keys: the console's results page
// joins them with the run's steps.

// generatedSlug is a slug made by the registry, which names nothing.
var generatedSlug = regexp.MustCompile(`^[0-9a-f]{12}$`)

// stepNames maps each step key of the run to a readable name: the slug of
// its evaluator, application or testset (when not generated), else the
// key. Two steps that would share a name keep their keys.
func stepNames(r *evaluations.Run) map[string]string {
	names := map[string]string{}
	count := map[string]int{}
	for _, st := range r.Data.Steps {
		n := st.Key
		for _, kind := range []string{"evaluator", "application", "testset"} {
			if ref, ok := st.References[kind]; ok && ref.Slug != nil && *ref.Slug != "" && !generatedSlug.MatchString(*ref.Slug) {
				n = *ref.Slug
				break
			}
		}
		names[st.Key] = n
		count[n]++
	}
	for k, n := range names {
		if count[n] > 1 {
			names[k] = k
		}
	}
	return names
}

// metricLeaf is a metric path as a reader says it: an output's own name,
// a trace metric without its attribute prefix and aggregation.
func metricLeaf(path string) string {
	if leaf, ok := strings.CutPrefix(path, "attributes.ag.data.outputs."); ok {
		return leaf
	}
	if leaf, ok := strings.CutPrefix(path, "attributes.ag.metrics."); ok {
		leaf = strings.TrimSuffix(strings.TrimSuffix(leaf, ".total"), ".cumulative")
		if leaf == "costs" {
			return "cost"
		}
		return leaf
	}
	return strings.TrimPrefix(path, "attributes.ag.")
}

// NameColumns gives the export readable headers (for CSV): "<step
// name>.status|trace_id|error" for each cell ("<step name>[<repeat>]."
// past repeat 0) and "<step name>.<metric leaf>" for each metric. A
// header that would repeat another keeps its step key form.
func (x *Export) NameColumns() {
	names := stepNames(x.Run)
	name := func(key string) string {
		if n, ok := names[key]; ok {
			return n
		}
		return key // a step the run does not declare
	}
	cols := make([]string, len(x.Columns))
	copy(cols, x.Columns)
	for c, at := range x.cellAt {
		p := name(c.StepKey)
		if c.RepeatIdx > 0 {
			p += "[" + strconv.Itoa(c.RepeatIdx) + "]"
		}
		cols[at], cols[at+1], cols[at+2] = p+".status", p+".trace_id", p+".error"
	}
	for k, at := range x.metricAt {
		cols[at] = name(k[0]) + "." + metricLeaf(k[1])
	}
	seen := map[string]int{}
	for _, c := range cols {
		seen[c]++
	}
	for i, c := range cols {
		if seen[c] > 1 {
			cols[i] = x.Columns[i]
		}
	}
	x.Columns = cols
}
