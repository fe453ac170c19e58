package sdkcompat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// List prices in US dollars per million tokens of the models the scripts
// call (the platform's default price table prices both).
const (
	gpt4oMiniInput  = 0.15
	gpt4oMiniOutput = 0.6
	embedSmallInput = 0.02
)

// aisdkRun is one run of a testdata/aisdk-* script: which project and
// integration, and how its spans are laid out.
type aisdkRun struct {
	name, dir, integration string
	// otel: the GenAI-conventions layout of @ai-sdk/otel's OpenTelemetry()
	// (invoke_agent, step, chat, execute_tool); otherwise the ai.* spans
	// (ai.generateText, .doGenerate, ai.toolCall).
	otel bool
	// user and session are the ids the script passes.
	user, session string
}

// TestVercelAISDK runs the Vercel AI SDK v6 (experimental_telemetry) and v7
// (@ai-sdk/otel, both integrations) against the platform: a generateText
// tool loop, a streamText, a generateObject and an embedMany each, read back
// through the trace API. Every model call's tokens are counted once (the
// root's cumulative tokens are the sum of the model calls' and what the SDK
// itself reported), the costs agree with the tokens, and the inputs and
// outputs of the agent, model-call and tool spans are there, tool outputs
// included. One platform for all three runs keeps the test short.
func TestVercelAISDK(t *testing.T) {
	p, e := platform(t)
	for _, r := range []aisdkRun{
		{name: "v6", dir: "aisdk-v6", user: "user-6", session: "session-6"},
		{name: "v7-otel", dir: "aisdk-v7", integration: "otel", otel: true, user: "user-7", session: "session-7"},
		{name: "v7-legacy", dir: "aisdk-v7", integration: "legacy", user: "user-7", session: "session-7"},
	} {
		t.Run(r.name, func(t *testing.T) {
			// The first model call of the tool loop calls the tool; every
			// other call gets the server's default answer (an echo, or an
			// object for a JSON schema).
			p.LLM.Script(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "weather", Arguments: `{"city":"Paris"}`}}})
			// AISDK_DUMP=<dir> makes the scripts also write the spans they
			// export as golden inputs for pkg/spanmodel's
			// testdata/golden/traces (how those were made).
			out := sdk{Dir: r.dir}.run(t, "run.mjs", e, "AISDK_INTEGRATION="+r.integration,
				"AISDK_DUMP="+os.Getenv("AISDK_DUMP"), "AISDK_DUMP_PREFIX=vercel_ai"+strings.ReplaceAll(strings.TrimPrefix(r.name, "v"), "-", "_"))
			var res struct {
				Traces map[string]string `json:"traces"`
				Usage  map[string]struct {
					InputTokens  float64 `json:"inputTokens"`
					OutputTokens float64 `json:"outputTokens"`
					Tokens       float64 `json:"tokens"`
				} `json:"usage"`
			}
			b, _ := json.Marshal(out)
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			t.Run("generate", func(t *testing.T) {
				n := 4 // ai.generateText, two .doGenerate, ai.toolCall
				if r.otel {
					n = 6 // invoke_agent, two steps with a chat each, execute_tool
				}
				spans := trace(t, p, e.APIKey, res.Traces["generate"], n)
				u := res.Usage["generate"]
				root := checkTokens(t, spans, "chat", 2, u.InputTokens, u.OutputTokens, gpt4oMiniInput, gpt4oMiniOutput)
				checkAISDKGenerate(t, r, root, spans)
			})
			t.Run("stream", func(t *testing.T) {
				spans := trace(t, p, e.APIKey, res.Traces["stream"], 2)
				u := res.Usage["stream"]
				root := checkTokens(t, spans, "chat", 1, u.InputTokens, u.OutputTokens, gpt4oMiniInput, gpt4oMiniOutput)
				if !strings.Contains(toJSON(attrOr(root, "ag.data.outputs")), "echo: Write a haiku about the sea") {
					t.Errorf("streamText root outputs lack the streamed text:\n%s", dump(spans))
				}
			})
			t.Run("object", func(t *testing.T) {
				spans := trace(t, p, e.APIKey, res.Traces["object"], 2)
				u := res.Usage["object"]
				root := checkTokens(t, spans, "chat", 1, u.InputTokens, u.OutputTokens, gpt4oMiniInput, gpt4oMiniOutput)
				if o := toJSON(attrOr(root, "ag.data.outputs")); !strings.Contains(o, "city") || !strings.Contains(o, "country") {
					t.Errorf("generateObject root outputs lack the object: %s\n%s", o, dump(spans))
				}
			})
			t.Run("embed", func(t *testing.T) {
				spans := trace(t, p, e.APIKey, res.Traces["embed"], 2)
				root := checkTokens(t, spans, "embedding", 1, res.Usage["embed"].Tokens, 0, embedSmallInput, 0)
				if root["span_type"] != "embedding" {
					t.Errorf("embedMany root type = %v, want embedding", root["span_type"])
				}
			})
		})
	}
}

// checkTokens asserts that exactly calls spans, all of type callType, carry
// usage of their own, that the root's cumulative tokens are their sum and
// equal what the SDK reported (prompt, completion), and that every cost is
// the tokens at the model's price. It returns the root.
func checkTokens(t *testing.T, spans []map[string]any, callType string, calls int, prompt, completion, inPrice, outPrice float64) map[string]any {
	t.Helper()
	var root map[string]any
	var sumP, sumC, sumCost float64
	n := 0
	for _, s := range spans {
		if _, ok := s["parent_id"]; !ok {
			root = s
		}
		inc, ok := attr(s, "ag.metrics.tokens.incremental")
		if !ok {
			if c, ok := attr(s, "ag.metrics.costs.incremental"); ok {
				t.Errorf("span %v has costs %v but no tokens of its own", s["span_name"], c)
			}
			continue
		}
		n++
		if s["span_type"] != callType {
			t.Errorf("span %v (%v) has tokens of its own %v; only the %s spans (the model calls) should", s["span_name"], s["span_type"], inc, callType)
		}
		p, c := numAt(s, "ag.metrics.tokens.incremental.prompt"), numAt(s, "ag.metrics.tokens.incremental.completion")
		sumP, sumC = sumP+p, sumC+c
		cost := numAt(s, "ag.metrics.costs.incremental.total")
		if want := (p*inPrice + c*outPrice) / 1e6; !near(cost, want) {
			t.Errorf("span %v: cost %v for %v/%v tokens, want %v", s["span_name"], cost, p, c, want)
		}
		sumCost += cost
	}
	if root == nil {
		t.Fatalf("no root span:\n%s", dump(spans))
	}
	if n != calls {
		t.Errorf("%d spans carry tokens of their own, want %d (the model calls):\n%s", n, calls, dump(spans))
	}
	if sumP != prompt || sumC != completion {
		t.Errorf("model calls' tokens %v/%v, the SDK reported %v/%v", sumP, sumC, prompt, completion)
	}
	gotP, gotC := numAt(root, "ag.metrics.tokens.cumulative.prompt"), numAt(root, "ag.metrics.tokens.cumulative.completion")
	if gotP != prompt || gotC != completion || numAt(root, "ag.metrics.tokens.cumulative.total") != prompt+completion {
		t.Errorf("root %v cumulative tokens %v/%v, want each model call counted once: %v/%v\n%s",
			root["span_name"], gotP, gotC, prompt, completion, dump(spans))
	}
	if got := numAt(root, "ag.metrics.costs.cumulative.total"); !near(got, sumCost) || !near(got, (prompt*inPrice+completion*outPrice)/1e6) {
		t.Errorf("root cumulative cost %v, want %v (the tokens at list price)", got, sumCost)
	}
	return root
}

// checkAISDKGenerate asserts the types, inputs and outputs of the tool
// loop's spans.
func checkAISDKGenerate(t *testing.T, r aisdkRun, root map[string]any, spans []map[string]any) {
	t.Helper()
	if s := toJSON(attrOr(root, "ag.data.inputs")); !strings.Contains(s, "What is the weather in Paris?") || !strings.Contains(s, "You are a weather bot.") {
		t.Errorf("root inputs lack the prompt or the system message: %s", s)
	}
	if s := toJSON(attrOr(root, "ag.data.outputs")); !strings.Contains(s, "echo: What is the weather in Paris?") {
		t.Errorf("root outputs lack the answer: %s", s)
	}
	if u, _ := attr(root, "ag.user.id"); u != r.user {
		t.Errorf("root user = %v, want %s", u, r.user)
	}
	if u, _ := attr(root, "ag.session.id"); u != r.session {
		t.Errorf("root session = %v, want %s", u, r.session)
	}
	var chats, tools []map[string]any
	for _, s := range spans {
		switch s["span_type"] {
		case "chat":
			chats = append(chats, s)
		case "tool":
			tools = append(tools, s)
		}
	}
	if len(chats) != 2 || len(tools) != 1 {
		t.Fatalf("want 2 chat spans and 1 tool span:\n%s", dump(spans))
	}
	if r.otel && root["span_type"] != "agent" {
		t.Errorf("invoke_agent root type = %v, want agent", root["span_type"])
	}
	// The first model call answered with the tool call only.
	first, second := chats[0], chats[1]
	if numAt(first, "ag.metrics.tokens.incremental.completion") > numAt(second, "ag.metrics.tokens.incremental.completion") {
		first, second = second, first // the tool call's answer is the shorter one
	}
	if out := toJSON(attrOr(first, "ag.data.outputs")); !strings.Contains(out, "weather") || !strings.Contains(out, "Paris") {
		t.Errorf("the tool-calling step's outputs lack the tool call: %s", out)
	}
	if in := toJSON(attrOr(second, "ag.data.inputs")); !strings.Contains(in, "sunny") {
		t.Errorf("the second step's inputs lack the tool result: %s", in)
	}
	tool := tools[0]
	if in := toJSON(attrOr(tool, "ag.data.inputs")); !strings.Contains(in, "Paris") {
		t.Errorf("tool inputs lack the arguments: %s", in)
	}
	if out := toJSON(attrOr(tool, "ag.data.outputs")); !strings.Contains(out, "sunny") {
		t.Errorf("tool outputs lack the result: %s", out)
	}
	for _, c := range chats {
		prompt, _ := attr(c, "ag.data.inputs.prompt")
		list, _ := prompt.([]any)
		if len(list) == 0 || toJSON(list[0]) != `{"content":"You are a weather bot.","role":"system"}` {
			t.Errorf("chat prompt does not start with the system message: %s", toJSON(prompt))
		}
		if tools := toJSON(attrOr(c, "ag.data.inputs.tools")); !strings.Contains(tools, `"function":{"description":"The weather in a city","name":"weather"`) {
			t.Errorf("chat inputs lack the tool definitions: %s", tools)
		}
	}
}

func attrOr(s map[string]any, path string) any {
	v, _ := attr(s, path)
	return v
}

func numAt(s map[string]any, path string) float64 {
	v, _ := attr(s, path)
	f, _ := v.(float64)
	return f
}
