package simpleevals

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Estimate is what a simple evaluation's model calls should cost before it
// runs (EstimateFormula says how it is computed). Cost is null when a
// source's items are not known before the run (a query's traces).
type Estimate struct {
	Cost             *float64 `json:"cost"`
	Cells            int      `json:"cells"`
	ModelCalls       int      `json:"model_calls"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	Models           []string `json:"models"`
	UnpricedModels   []string `json:"unpriced_models"`
	Assumptions      []string `json:"assumptions"`
}

// DefaultOutputTokens are a model call's completion tokens when its
// step sets no max_tokens.
const DefaultOutputTokens = 256

// judgeDefaultModel and judgeDefaultChars are the LLM judge's model and
// its default prompt's length when its revision sets none (the runtime's
// prompt.ParseJudge and prompt.DefaultJudgeMessages).
const (
	judgeDefaultModel = "gpt-4o"
	judgeDefaultChars = 330
)

// EstimateFormula is the estimate's method, stated in every estimate.
var EstimateFormula = []string{
	"one model call per application cell (testcases × repeats when is_split, else testcases) and per LLM-judge cell (testcases × repeats); code evaluators call no model",
	"prompt tokens = (characters of the step's prompt template + characters of the testcase's values) / 4, rounded up; an LLM judge also reads the application's output",
	fmt.Sprintf("completion tokens = the step's max_tokens, else %d", DefaultOutputTokens),
	"cost = tokens × the model's price in the price table (operator overrides first); retries, fallbacks and model-call cache hits are not counted",
}

// modelStep is what the estimate reads of an application or evaluator
// revision: the model it calls and its prompt's size.
type modelStep struct {
	model     string
	chars     int
	maxTokens int
	judge     bool
}

// readModelStep reads a workflow revision's data: a prompt application
// (parameters.prompt {messages, llm_config {model, max_tokens}}) or the LLM
// judge (auto_ai_critique: parameters {prompt_template, model,
// max_tokens}); ok is false for a step that calls no model.
func readModelStep(raw json.RawMessage) (modelStep, bool) {
	var d struct {
		URI        string         `json:"uri"`
		Parameters map[string]any `json:"parameters"`
	}
	if json.Unmarshal(raw, &d) != nil || d.Parameters == nil {
		return modelStep{}, false
	}
	if strings.Contains(d.URI, ":auto_ai_critique:") {
		m := modelStep{judge: true, model: judgeDefaultModel, chars: judgeDefaultChars, maxTokens: intOf(d.Parameters["max_tokens"])}
		if s, _ := d.Parameters["model"].(string); s != "" {
			m.model = s
		}
		if msgs, ok := d.Parameters["prompt_template"].([]any); ok {
			m.chars = messageChars(msgs)
		}
		return m, true
	}
	p, _ := d.Parameters["prompt"].(map[string]any)
	if p == nil {
		return modelStep{}, false
	}
	cfg, _ := p["llm_config"].(map[string]any)
	model, _ := cfg["model"].(string)
	if model == "" {
		return modelStep{}, false
	}
	msgs, _ := p["messages"].([]any)
	return modelStep{model: model, chars: messageChars(msgs), maxTokens: intOf(cfg["max_tokens"])}, true
}

// messageChars is the length of the messages' text content.
func messageChars(msgs []any) int {
	n := 0
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		switch c := mm["content"].(type) {
		case string:
			n += len(c)
		case []any:
			for _, part := range c {
				if pm, ok := part.(map[string]any); ok {
					s, _ := pm["text"].(string)
					n += len(s)
				}
			}
		}
	}
	return n
}

func intOf(v any) int {
	f, _ := v.(float64)
	if f < 1 {
		return 0
	}
	return int(f)
}

// valueChars is the length of a testcase's values: strings as written,
// other values as JSON; testcase_dedup_id is the registry's, not an input.
func valueChars(raw json.RawMessage) int {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return len(raw)
	}
	n := 0
	for k, v := range m {
		if k == "testcase_dedup_id" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			n += len(s)
		} else {
			n += len(v)
		}
	}
	return n
}

func tokens(chars int) int { return int(math.Ceil(float64(chars) / 4)) }

// Estimate computes what the evaluation in would cost (EstimateFormula),
// resolving its steps as a create would (the same 404s and 422s); nothing
// is written.
func (s *Simple) Estimate(ctx context.Context, sc scope.Scope, in *SimpleInput) (*Estimate, error) {
	live := in.Flags.IsLive != nil && *in.Flags.IsLive
	if _, err := s.fam.Pin(ctx, sc, in.Sources(), live); err != nil {
		return nil, err
	}
	return s.estimate(ctx, sc, in)
}

// estimate is Estimate over steps already resolved.
func (s *Simple) estimate(ctx context.Context, sc scope.Scope, in *SimpleInput) (*Estimate, error) {
	live := in.Flags.IsLive != nil && *in.Flags.IsLive
	repeats := 1
	if in.Repeats != nil {
		repeats = *in.Repeats
	}
	split := in.Flags.IsSplit != nil && *in.Flags.IsSplit
	est := &Estimate{Models: []string{}, UnpricedModels: []string{}, Assumptions: slices.Clone(EstimateFormula)}
	src := in.Sources()
	if len(src.Queries) > 0 || live {
		est.Assumptions = append(est.Assumptions, "a query's traces are not known before the run: no cost is estimated")
		return est, nil
	}
	est.Cost = new(float64)
	// The testcases' input sizes, over every testset step.
	var inputs []int
	for _, t := range src.Testsets {
		r, err := s.fam.Testsets.Resolve(ctx, sc, revRefs(t.RevisionID))
		if err != nil || r == nil {
			return nil, err
		}
		tcs, err := s.fam.Testsets.Testcases(ctx, sc, r)
		if err != nil {
			return nil, err
		}
		for _, tc := range tcs {
			inputs = append(inputs, valueChars(tc.Data))
		}
	}
	var app *modelStep
	appCells := 0
	for _, a := range src.Applications {
		r, err := s.fam.workflow(ctx, sc, "application", ApplicationSteps, a.RevisionID)
		if err != nil {
			return nil, err
		}
		reps := 1
		if split {
			reps = repeats
		}
		appCells += len(inputs) * reps
		if m, ok := readModelStep(r.Data); ok {
			app = &m
			est.add(s.prices, m, inputs, reps, 0)
		}
	}
	est.Cells += appCells
	for _, e := range src.Evaluators {
		if e.Origin != "" && e.Origin != "auto" {
			continue // human and custom evaluators are not run by the workers
		}
		r, err := s.fam.workflow(ctx, sc, "evaluator", EvaluatorSteps, e.RevisionID)
		if err != nil {
			return nil, err
		}
		est.Cells += len(inputs) * repeats
		if m, ok := readModelStep(r.Data); ok {
			extra := 0
			if m.judge && app != nil {
				extra = 4 * app.completion()
			}
			est.add(s.prices, m, inputs, repeats, extra)
		}
	}
	return est, nil
}

func (m modelStep) completion() int {
	if m.maxTokens > 0 {
		return m.maxTokens
	}
	return DefaultOutputTokens
}

// add counts step m's calls: reps per testcase of inputs, each prompt
// extra characters longer (a judge reading the application's output).
func (e *Estimate) add(p *spanmodel.Prices, m modelStep, inputs []int, reps, extra int) {
	if !slices.Contains(e.Models, m.model) {
		e.Models = append(e.Models, m.model)
	}
	var cost float64
	priced := true
	for _, in := range inputs {
		pt, ct := tokens(m.chars+in+extra), m.completion()
		c, ok := p.CallCost("", m.model, float64(pt), float64(ct), time.Now())
		priced = priced && ok
		e.ModelCalls += reps
		e.PromptTokens += pt * reps
		e.CompletionTokens += ct * reps
		cost += c * float64(reps)
	}
	if !priced && !slices.Contains(e.UnpricedModels, m.model) {
		e.UnpricedModels = append(e.UnpricedModels, m.model)
	}
	*e.Cost += cost
}
