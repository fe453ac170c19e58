package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

// JudgeKey is the catalog key of the LLM-as-a-judge evaluator.
const JudgeKey = "auto_ai_critique"

// DefaultJudgeModel is the judge's model when parameters name none (the
// catalog's default).
const DefaultJudgeModel = "gpt-4o"

// Judge is auto_ai_critique's parameters, read: the judge prompt, and how
// its answer becomes the evaluator's outputs.
//
// The judge's variables (see Variables) are:
//   - every testcase input, flat ({{question}}), and all of them as inputs;
//   - outputs and prediction: the evaluated application's output;
//   - ground_truth, correct_answer and reference: inputs[CorrectAnswerKey],
//     defined only when the testcase has that key;
//   - trace: the evaluated trace, when given (else undefined).
//
// A name the testcase also uses (say an input called "outputs") is shadowed
// by the judge's own variable; {{$.inputs.outputs}} still reaches it.
type Judge struct {
	Template         Template
	Threshold        float64 // success is score >= Threshold; default 0.5
	CorrectAnswerKey string  // default "correct_answer"
	Version          string
}

// DefaultJudgeMessages is the judge prompt used when prompt_template is
// absent (curly format).
func DefaultJudgeMessages() []Message {
	return []Message{
		{Role: "system", Content: "You are an impartial evaluator of an AI application's output. " +
			"Judge whether the output correctly and helpfully answers the inputs. " +
			"Reply with a JSON object {\"score\": <number from 0 to 1>, \"comment\": <one sentence>}, and nothing else."},
		{Role: "user", Content: "Inputs:\n{{inputs}}\n\nOutput:\n{{outputs}}"},
	}
}

// defaultJudgeSchema is the judge's answer shape when json_schema is absent.
func defaultJudgeSchema() map[string]any {
	return map[string]any{
		"name": "schema",
		"schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"score":   map[string]any{"type": "number", "minimum": 0, "maximum": 1},
				"comment": map[string]any{"type": "string"},
			},
			"required":             []any{"score", "comment"},
			"additionalProperties": false,
		},
		"strict": true,
	}
}

// ParseJudge reads auto_ai_critique's parameters: prompt_template (the
// judge messages; DefaultJudgeMessages when absent), model (default
// gpt-4o), connection, response_type (json_schema by default, json_object
// or text), json_schema ({name, schema, strict}), template_format (curly
// by default; fstring for versions 1 and 2, whose prompts use {name}),
// threshold (default 0.5), correct_answer_key (default correct_answer) and
// version. A malformed value is errs.Unprocessable naming
// parameters.<key>.
func ParseJudge(parameters map[string]any) (Judge, error) {
	at := []any{"parameters"}
	j := Judge{Threshold: 0.5, CorrectAnswerKey: "correct_answer"}
	var err error
	if j.Version, err = optString(parameters, "version", at); err != nil {
		if n, ok := toFloat(parameters["version"]); ok {
			j.Version, err = formatFloat(n), nil
		} else {
			return j, err
		}
	}
	t := Template{FallbackPolicy: "off", messagesPath: "parameters.prompt_template"}
	if v, ok := parameters["prompt_template"]; ok && v != nil {
		if t.Messages, err = parseMessages(v, path(at, "prompt_template")); err != nil {
			return j, err
		}
		if len(t.Messages) == 0 {
			return j, fieldErr(path(at, "prompt_template"), "must hold at least one message", v)
		}
	} else {
		t.Messages = DefaultJudgeMessages()
	}
	if t.TemplateFormat, err = parseFormat(parameters["template_format"], path(at, "template_format")); err != nil {
		return j, err
	}
	if f := parameters["template_format"]; (f == nil || f == "") && (j.Version == "1" || j.Version == "2") {
		t.TemplateFormat = FormatFString
	}
	if t.LLMConfig.Model, err = optString(parameters, "model", at); err != nil {
		return j, err
	}
	if t.LLMConfig.Model == "" {
		t.LLMConfig.Model = DefaultJudgeModel
	}
	if t.LLMConfig.Connection, err = optString(parameters, "connection", at); err != nil {
		return j, err
	}
	rt, err := optString(parameters, "response_type", at)
	if err != nil {
		return j, err
	}
	switch rt {
	case "", "json_schema":
		js := defaultJudgeSchema()
		if v, ok := parameters["json_schema"]; ok && v != nil {
			m, ok := v.(map[string]any)
			if !ok {
				return j, fieldErr(path(at, "json_schema"), "must be an object", v)
			}
			if s, ok := m["schema"]; ok && s != nil {
				if _, ok := s.(map[string]any); !ok {
					return j, fieldErr(path(at, "json_schema", "schema"), "must be an object", s)
				}
			}
			if n, ok := m["name"]; ok && n != nil {
				if _, ok := n.(string); !ok {
					return j, fieldErr(path(at, "json_schema", "name"), "must be a string", n)
				}
			}
			js = map[string]any{"name": "schema", "strict": true}
			for k, e := range m {
				if e != nil {
					js[k] = e
				}
			}
		}
		t.LLMConfig.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": js}
	case "json_object":
		t.LLMConfig.ResponseFormat = map[string]any{"type": "json_object"}
	case "text":
	default:
		return j, fieldErr(path(at, "response_type"), "must be one of json_schema, json_object, text", rt)
	}
	if n, ok, err := optNumber(parameters, "threshold", at); err != nil {
		return j, err
	} else if ok {
		j.Threshold = n
	}
	if k, err := optString(parameters, "correct_answer_key", at); err != nil {
		return j, err
	} else if k != "" {
		j.CorrectAnswerKey = k
	}
	j.Template = t
	return j, nil
}

// Variables is the judge's variable scope for one evaluated output (see
// Judge). inputs is the testcase's data; outputs the application's output;
// trace the evaluated trace (nil when not given).
func (j Judge) Variables(inputs map[string]any, outputs any, trace map[string]any) map[string]any {
	if w, ok := inputs["inputs"].(map[string]any); ok && len(inputs) == 1 {
		inputs = w
	}
	if inputs == nil {
		inputs = map[string]any{}
	}
	vars := make(map[string]any, len(inputs)+8)
	for k, v := range inputs {
		vars[k] = v
	}
	vars["inputs"] = inputs
	vars["outputs"] = outputs
	vars["prediction"] = outputs
	if ca, ok := inputs[j.CorrectAnswerKey]; ok {
		vars["ground_truth"] = ca
		vars["correct_answer"] = ca
		vars["reference"] = ca
	}
	if trace != nil {
		vars["trace"] = trace
	}
	return vars
}

// Render renders the judge messages and response_format for one evaluated
// output. An unresolved variable is errs.Invalid naming it.
func (j Judge) Render(inputs map[string]any, outputs any, trace map[string]any) ([]Message, map[string]any, error) {
	return j.Template.renderWith(j.Variables(inputs, outputs, trace), nil)
}

// Outputs reads the judge model's answer into the evaluator's outputs:
//   - a JSON object is the outputs; when it has a numeric score and no
//     success, success is score >= Threshold (a boolean score gives
//     success = score);
//   - a bare number n (also a quoted one) is {score: n, success: n >= Threshold};
//   - a boolean b is {success: b};
//   - anything else is errs.Unprocessable quoting the content (truncated).
//
// A ```json fence around the answer is ignored.
func (j Judge) Outputs(content string) (map[string]any, error) {
	s := strings.TrimSpace(stripFence(strings.TrimSpace(content)))
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if str, ok := v.(string); ok {
			v = str
			if f, err := strconv.ParseFloat(strings.TrimSpace(str), 64); err == nil {
				v = f
			}
		}
		switch x := v.(type) {
		case map[string]any:
			if _, has := x["success"]; !has {
				switch sc := x["score"].(type) {
				case float64:
					x["success"] = sc >= j.Threshold
				case bool:
					x["success"] = sc
				}
			}
			return x, nil
		case float64:
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				return map[string]any{"score": x, "success": x >= j.Threshold}, nil
			}
		case bool:
			return map[string]any{"success": x}, nil
		}
	}
	return nil, errs.Message(errs.Unprocessable, "runtime.judge_output",
		fmt.Sprintf("the judge's answer is not a JSON object, a number or a boolean: %q", truncate(content, 200)),
		map[string]any{"content": truncate(content, 200)})
}

// stripFence removes a Markdown code fence around s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(s[3:], "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
		s = s[i+1:]
	}
	return s
}
