package simpleevals

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// SimpleFlags are the flags a simple evaluation's client may set; the
// rest of a run's flags follow from its steps and its lifecycle.
type SimpleFlags struct {
	IsLive   *bool `json:"is_live"`
	IsCached *bool `json:"is_cached"`
	IsSplit  *bool `json:"is_split"`
}

// SimpleInput is a simple evaluation as a client sends it (create or
// edit). Steps[k] is set only for the *_steps fields that were sent.
type SimpleInput struct {
	ID          *string
	Name        *string
	Description *string
	Flags       SimpleFlags
	Tags        json.RawMessage
	Meta        json.RawMessage
	Status      *evaluations.Status
	Steps       map[string][]StepRef
	Repeats     *int
	Concurrency *evaluations.Concurrency
	ModelCache  *bool
	Budget      *float64
}

// MaxBudget is the largest budget a run may carry (USD).
const MaxBudget = 1_000_000

// Sources returns the steps sent, by kind.
func (in *SimpleInput) Sources() Sources {
	return Sources{Queries: in.Steps[QuerySteps], Testsets: in.Steps[TestsetSteps],
		Applications: in.Steps[ApplicationSteps], Evaluators: in.Steps[EvaluatorSteps]}
}

// simpleWire is the JSON shape of SimpleInput before the steps are read.
type simpleWire struct {
	ID          *string         `json:"id"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Flags       *SimpleFlags    `json:"flags"`
	Tags        json.RawMessage `json:"tags"`
	Meta        json.RawMessage `json:"meta"`
	Data        *struct {
		Status           *evaluations.Status      `json:"status"`
		QuerySteps       json.RawMessage          `json:"query_steps"`
		TestsetSteps     json.RawMessage          `json:"testset_steps"`
		ApplicationSteps json.RawMessage          `json:"application_steps"`
		EvaluatorSteps   json.RawMessage          `json:"evaluator_steps"`
		Repeats          *int                     `json:"repeats"`
		Concurrency      *evaluations.Concurrency `json:"concurrency"`
		ModelCache       *bool                    `json:"model_cache"`
		Budget           *float64                 `json:"budget"`
	} `json:"data"`
}

// ParseSimple reads a simple evaluation object at loc (body, evaluation).
// Errors are 422s naming the field.
func ParseSimple(raw json.RawMessage, loc ...any) (*SimpleInput, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var w simpleWire
	if err := decodeAt(raw, &w, loc...); err != nil {
		return nil, err
	}
	in := &SimpleInput{ID: w.ID, Name: w.Name, Description: w.Description, Tags: evaluations.Nullable(w.Tags), Meta: evaluations.Nullable(w.Meta),
		Steps: map[string][]StepRef{}}
	if w.Flags != nil {
		in.Flags = *w.Flags
	}
	if err := evaluations.CheckObjects(nil, in.Tags, in.Meta, loc...); err != nil {
		return nil, err
	}
	if err := evaluations.CheckText(in.Name, wire.MaxNameLen, at("name")...); err != nil {
		return nil, err
	}
	if err := evaluations.CheckText(in.Description, wire.MaxTextLen, at("description")...); err != nil {
		return nil, err
	}
	if d := w.Data; d != nil {
		if d.Status != nil {
			st, err := evaluations.CheckStatus(*d.Status, evaluations.Pending, at("data", "status")...)
			if err != nil {
				return nil, err
			}
			in.Status = &st
		}
		for _, f := range []struct {
			key string
			raw json.RawMessage
		}{{QuerySteps, d.QuerySteps}, {TestsetSteps, d.TestsetSteps}, {ApplicationSteps, d.ApplicationSteps}, {EvaluatorSteps, d.EvaluatorSteps}} {
			if f.raw == nil {
				continue
			}
			refs, err := ParseStepRefs(f.raw, at("data", f.key)...)
			if err != nil {
				return nil, err
			}
			if len(refs) > evaluations.MaxSteps {
				return nil, errs.Field("List should have at most "+strconv.Itoa(evaluations.MaxSteps)+" items", nil, at("data", f.key)...)
			}
			in.Steps[f.key] = refs
		}
		in.Repeats, in.Concurrency, in.ModelCache, in.Budget = d.Repeats, d.Concurrency, d.ModelCache, d.Budget
		if in.Budget != nil && !(*in.Budget > 0 && *in.Budget <= MaxBudget) {
			return nil, errs.Field("Input should be greater than 0 and at most "+strconv.Itoa(MaxBudget)+" (USD)", *in.Budget, at("data", "budget")...)
		}
		if in.Repeats != nil && (*in.Repeats < 1 || *in.Repeats > evaluations.MaxRepeats) {
			return nil, errs.Field("Input should be between 1 and "+strconv.Itoa(evaluations.MaxRepeats), *in.Repeats, at("data", "repeats")...)
		}
		// The records check these too, but at body.runs.0: checked here
		// so the error names the evaluation's field.
		if c := in.Concurrency; c != nil {
			if c.BatchSize != nil && (*c.BatchSize < 1 || *c.BatchSize > 1000) {
				return nil, errs.Field("Input should be between 1 and 1000", *c.BatchSize, at("data", "concurrency", "batch_size")...)
			}
			if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 100) {
				return nil, errs.Field("Input should be between 0 and 100", *c.MaxRetries, at("data", "concurrency", "max_retries")...)
			}
			if c.RetryDelay != nil && (*c.RetryDelay < 0 || *c.RetryDelay > 3600) {
				return nil, errs.Field("Input should be between 0 and 3600", *c.RetryDelay, at("data", "concurrency", "retry_delay")...)
			}
		}
	}
	return in, nil
}

// decodeAt unmarshals raw into v; a type error is a 422 naming the field
// (json's dotted path under loc), anything else a 422 at loc.
func decodeAt(raw json.RawMessage, v any, loc ...any) error {
	if wire.IsNull(raw) || bytes.TrimSpace(raw)[0] != '{' {
		return errs.Field("Input should be a valid dictionary", nil, loc...)
	}
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		p := append([]any{}, loc...)
		if te.Field != "" {
			for _, f := range strings.Split(te.Field, ".") {
				p = append(p, f)
			}
		}
		return errs.Field("Input should be a valid "+te.Type.String(), nil, p...)
	}
	return errs.Field("Input should be a valid dictionary", nil, loc...)
}

// Slice narrows a slice operation to scenarios, step keys and repeats;
// empty lists mean all of them.
type Slice struct {
	ScenarioIDs []uuid.UUID
	StepKeys    []string
	RepeatIdxs  []int
}

// SliceInput is a slice operation's body.
type SliceInput struct {
	Slice
	// Statuses (process) re-processes the cells with one of these
	// statuses; Overwrite every cell of the slice.
	Statuses  []evaluations.Status
	Overwrite bool
	// Results (populate) are the cells the client writes.
	Results []evaluations.Result
}

// ParseSlice reads a slice operation's body at loc ("body").
func ParseSlice(raw json.RawMessage, loc ...any) (*SliceInput, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var w struct {
		ScenarioIDs []string             `json:"scenario_ids"`
		StepKeys    []string             `json:"step_keys"`
		RepeatIdxs  []int                `json:"repeat_idxs"`
		Statuses    []evaluations.Status `json:"statuses"`
		Overwrite   *bool                `json:"overwrite"`
		Results     []evaluations.Result `json:"results"`
	}
	in := &SliceInput{}
	if wire.IsNull(raw) {
		return in, nil
	}
	if err := decodeAt(raw, &w, loc...); err != nil {
		return nil, err
	}
	for _, n := range []struct {
		k string
		n int
	}{{"scenario_ids", len(w.ScenarioIDs)}, {"step_keys", len(w.StepKeys)}, {"repeat_idxs", len(w.RepeatIdxs)}, {"results", len(w.Results)}} {
		if n.n > 10000 {
			return nil, errs.Field("List should have at most 10000 items", nil, at(n.k)...)
		}
	}
	for i, s := range w.ScenarioIDs {
		id, err := evaluations.ParseID(s, at("scenario_ids", i)...)
		if err != nil {
			return nil, err
		}
		in.ScenarioIDs = append(in.ScenarioIDs, id)
	}
	in.StepKeys, in.RepeatIdxs, in.Results = w.StepKeys, w.RepeatIdxs, w.Results
	for i, st := range w.Statuses {
		s, err := evaluations.CheckStatus(st, "", at("statuses", i)...)
		if err != nil {
			return nil, err
		}
		if s == "" {
			return nil, errs.Field("Input should be a status", "", at("statuses", i)...)
		}
		in.Statuses = append(in.Statuses, s)
	}
	in.Overwrite = w.Overwrite != nil && *w.Overwrite
	return in, nil
}
