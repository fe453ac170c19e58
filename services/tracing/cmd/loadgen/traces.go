package main

// Realistic traces: what an LLM application's SDK exports, in the three
// conventions the normaliser maps (pkg/spanmodel/adapters.go) and in the
// proportions below, built once into a pool and then re-sent with fresh
// trace ids and times (corpus.go has the text).
//
//   - OpenInference RAG (40 %): a CHAIN root, an EMBEDDING, a RETRIEVER with
//     3-6 documents, sometimes a RERANKER, then the LLM call whose prompt
//     holds the system prompt, the documents and the question;
//   - OTel GenAI agent (30 %, PydanticAI's layout): invoke_agent, then 1-3
//     rounds of chat + execute_tool, then the answering chat; the root
//     repeats the whole conversation (pydantic_ai.all_messages);
//   - OpenLLMetry workflow (20 %): workflow, task, openai.chat;
//   - a lone GenAI chat span (10 %).
//
// Lengths are log-normal (most texts short, a long tail to 8-12 KB), token
// counts follow the text (4 characters a token), costs come from the price
// table on the server (models it knows), durations from the time to first
// token plus the output tokens at the model's speed; 2 % of model calls
// fail (rate limit, timeout). Each application has its own two system
// prompts, repeated across its traces as real ones are.

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

type model struct {
	name, provider string
	weight         int
	msPerToken     float64 // output speed
}

// models are the price table's names (pkg/prices/data/genai-prices.json),
// weighted roughly as small models dominate production traffic.
var models = []model{
	{"gpt-4o-mini", "openai", 30, 12}, {"gpt-4o", "openai", 12, 25}, {"gpt-4.1-mini", "openai", 14, 12},
	{"gpt-4.1", "openai", 6, 28}, {"o3-mini", "openai", 4, 15}, {"claude-3-5-haiku-latest", "anthropic", 10, 14},
	{"claude-sonnet-4-20250514", "anthropic", 10, 30}, {"gemini-2.0-flash", "google", 10, 8}, {"mistral-large-latest", "mistral", 4, 25},
}

type app struct {
	service, lang, sdk string
	system             []string // system prompts
	agent              string
	tools              []string
}

var appSpecs = []app{
	{service: "support-bot", lang: "python", agent: "support_agent", tools: []string{"lookup_order", "refund_order", "search_kb"}},
	{service: "docs-search", lang: "python", agent: "docs_agent", tools: []string{"search_docs", "fetch_page"}},
	{service: "sales-assistant", lang: "nodejs", agent: "sales_agent", tools: []string{"crm_lookup", "price_quote", "calendar_slots"}},
	{service: "code-review", lang: "python", agent: "review_agent", tools: []string{"read_file", "run_tests", "grep_repo"}},
	{service: "travel-agent", lang: "nodejs", agent: "trip_planner", tools: []string{"search_flights", "hotel_rates", "weather"}},
	{service: "billing-helper", lang: "java", agent: "billing_agent", tools: []string{"invoice_get", "payment_status"}},
}

// gen draws traces from one seeded generator: the same seed gives the
// same traces, byte for byte (TestCorpusDeterministic).
type gen struct {
	r        *rand.Rand
	c        *chain
	apps     []app
	sessions []string
	base     time.Time
	buf      []byte
}

func newGen(seed uint64, base time.Time) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), c: corpusChain(), base: base}
	for _, a := range appSpecs {
		a.system = []string{g.text(700, 0.6, 200, 4000), g.text(700, 0.6, 200, 4000)}
		g.apps = append(g.apps, a)
	}
	return g
}

var corpusChain = sync.OnceValue(func() *chain { return newChain(corpusText) })

func (g *gen) text(median, sigma float64, lo, hi int) string {
	g.buf = g.c.text(g.r, g.buf[:0], lognormal(g.r, median, sigma, lo, hi))
	return string(g.buf)
}

func (g *gen) hexID(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return hex.EncodeToString(b)
}

func (g *gen) model() model {
	total := 0
	for _, m := range models {
		total += m.weight
	}
	x := g.r.IntN(total)
	for _, m := range models {
		if x < m.weight {
			return m
		}
		x -= m.weight
	}
	return models[0]
}

func (g *gen) ms(median, sigma float64, lo, hi int) time.Duration {
	return time.Duration(lognormal(g.r, median, sigma, lo, hi)) * time.Millisecond
}

// tokens is the token count of texts at about 4 characters a token.
func tokens(texts ...string) int64 {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	return int64(n/4 + 1)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// traceBuilder lays out one trace's spans one after the other in time.
type traceBuilder struct {
	g     *gen
	ss    ptrace.ScopeSpans
	t     time.Time
	count int
}

func (b *traceBuilder) span(parent pcommon.SpanID, name string, kind ptrace.SpanKind, d time.Duration) ptrace.Span {
	sp := b.ss.Spans().AppendEmpty()
	sp.SetTraceID(marker)
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], b.g.r.Uint64()|1) // never all zero
	sp.SetSpanID(sid)
	if !parent.IsEmpty() {
		sp.SetParentSpanID(parent)
	}
	sp.SetName(name)
	sp.SetKind(kind)
	b.t = b.t.Add(b.g.ms(3, 0.8, 0, 200)) // the application's own work between calls
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(b.t))
	b.t = b.t.Add(d)
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(b.t))
	b.count++
	return sp
}

// llmCall draws a model call's output, duration and outcome.
type llmCall struct {
	m       model
	out     string
	dur     time.Duration
	failed  string // status message of a failed call
	inToks  int64
	outToks int64
}

func (g *gen) call(prompt ...string) llmCall {
	c := llmCall{m: g.model(), out: g.text(350, 1.0, 10, 8000)}
	c.inToks, c.outToks = tokens(prompt...), tokens(c.out)
	c.dur = g.ms(450, 0.5, 80, 20000) + time.Duration(float64(c.outToks)*c.m.msPerToken*float64(time.Millisecond))
	if g.r.IntN(50) == 0 {
		c.failed = []string{"Error code: 429 - Rate limit reached for requests", "Request timed out.", "Error code: 529 - Overloaded", "Error code: 500 - The server had an error while processing your request."}[g.r.IntN(4)]
		c.out, c.outToks = "", 0
	}
	return c
}

func setFailed(sp ptrace.Span, msg string) {
	if msg != "" {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(msg)
	}
}

// trace appends one trace (a ResourceSpans) to td; its end is g.base.
func (g *gen) trace(td ptrace.Traces) {
	a := g.apps[g.r.IntN(len(g.apps))]
	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", a.service)
	ra.PutStr("service.version", fmt.Sprintf("1.%d.%d", g.r.IntN(20), g.r.IntN(10)))
	ra.PutStr("deployment.environment", []string{"production", "production", "production", "staging"}[g.r.IntN(4)])
	ra.PutStr("telemetry.sdk.language", a.lang)
	ra.PutStr("host.name", fmt.Sprintf("%s-%s", a.service, g.hexID(4)))
	b := &traceBuilder{g: g, ss: rs.ScopeSpans().AppendEmpty(), t: g.base}
	// A session goes on for a few traces; users come back.
	session := "sess_" + g.hexID(8)
	if len(g.sessions) > 0 && g.r.IntN(3) == 0 {
		session = g.sessions[g.r.IntN(len(g.sessions))]
	} else {
		g.sessions = append(g.sessions[max(0, len(g.sessions)-200):], session)
	}
	user := "user_" + strconv.Itoa(int(lognormal(g.r, 300, 1.5, 1, 100000)))
	question := g.text(140, 0.9, 15, 6000)
	switch x := g.r.IntN(10); {
	case x < 4:
		b.ss.Scope().SetName("openinference.instrumentation.langchain")
		g.rag(b, a, session, user, question)
	case x < 7:
		b.ss.Scope().SetName("pydantic-ai")
		g.agent(b, a, session, user, question)
	case x < 9:
		b.ss.Scope().SetName("opentelemetry.instrumentation.openai.v1")
		g.workflow(b, a, session, user, question)
	default:
		b.ss.Scope().SetName("opentelemetry.instrumentation.openai")
		c := g.call(a.system[0], question)
		sp := b.span(pcommon.SpanID{}, "chat "+c.m.name, ptrace.SpanKindClient, c.dur)
		g.genAIChat(sp, c, []any{msg("system", a.system[0]), msg("user", question)}, c.out)
		sp.Attributes().PutStr("gen_ai.conversation.id", session)
		sp.Attributes().PutStr("user.id", user)
	}
	// The trace ends now (at g.base): shift every span.
	shift := g.base.Sub(b.t)
	spans := b.ss.Spans()
	for i := 0; i < spans.Len(); i++ {
		sp := spans.At(i)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(sp.StartTimestamp().AsTime().Add(shift)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(sp.EndTimestamp().AsTime().Add(shift)))
	}
	// The root (first span) covers its children.
	if spans.Len() > 1 {
		spans.At(0).SetEndTimestamp(pcommon.NewTimestampFromTime(g.base))
	}
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func (g *gen) rag(b *traceBuilder, a app, session, user, question string) {
	root := b.span(pcommon.SpanID{}, []string{"RetrievalQA", "answer_question", "rag_pipeline"}[g.r.IntN(3)], ptrace.SpanKindServer, 0)
	rid := root.SpanID()
	ra := root.Attributes()
	ra.PutStr("openinference.span.kind", "CHAIN")
	ra.PutStr("input.value", question)
	ra.PutStr("input.mime_type", "text/plain")
	ra.PutStr("session.id", session)
	ra.PutStr("user.id", user)
	ra.PutStr("metadata", mustJSON(map[string]any{"channel": []string{"web", "mobile", "email", "slack"}[g.r.IntN(4)],
		"locale": []string{"en-GB", "en-US", "de-DE", "fr-FR", "es-ES"}[g.r.IntN(5)], "app_version": fmt.Sprintf("2.%d.%d", g.r.IntN(30), g.r.IntN(10))}))

	emb := b.span(rid, "embed_query", ptrace.SpanKindClient, g.ms(60, 0.5, 10, 3000))
	emb.Attributes().PutStr("openinference.span.kind", "EMBEDDING")
	emb.Attributes().PutStr("embedding.model_name", "text-embedding-3-small")
	emb.Attributes().PutStr("embedding.embeddings.0.embedding.text", question)

	ret := b.span(rid, "retrieve", ptrace.SpanKindClient, g.ms(80, 0.6, 5, 5000))
	rt := ret.Attributes()
	rt.PutStr("openinference.span.kind", "RETRIEVER")
	rt.PutStr("input.value", question)
	docs := make([]string, 3+g.r.IntN(4))
	context := ""
	for i := range docs {
		docs[i] = g.text(600, 0.6, 80, 4000)
		p := "retrieval.documents." + strconv.Itoa(i) + ".document."
		rt.PutStr(p+"id", "kb/"+a.service+"/"+g.hexID(6))
		rt.PutStr(p+"content", docs[i])
		rt.PutDouble(p+"score", float64(900-i*60-g.r.IntN(50))/1000)
		rt.PutStr(p+"metadata", mustJSON(map[string]any{"source": "docs/" + g.hexID(3) + ".md", "chunk": g.r.IntN(40)}))
		context += docs[i] + "\n\n"
	}
	if g.r.IntN(10) < 3 {
		rr := b.span(rid, "rerank", ptrace.SpanKindClient, g.ms(120, 0.5, 10, 5000))
		ra := rr.Attributes()
		ra.PutStr("openinference.span.kind", "RERANKER")
		ra.PutStr("reranker.model_name", "rerank-english-v3.0")
		ra.PutStr("reranker.query", question)
		ra.PutInt("reranker.top_k", 3)
		for i := 0; i < 3; i++ {
			p := "reranker.output_documents." + strconv.Itoa(i) + ".document."
			ra.PutStr(p+"id", "kb/"+a.service+"/"+g.hexID(6))
			ra.PutDouble(p+"score", float64(990-i*100-g.r.IntN(80))/1000)
		}
	}

	system := a.system[g.r.IntN(len(a.system))] + "\n\nContext:\n" + context
	c := g.call(system, question)
	llm := b.span(rid, []string{"ChatOpenAI", "ChatAnthropic", "llm"}[g.r.IntN(3)], ptrace.SpanKindClient, c.dur)
	la := llm.Attributes()
	la.PutStr("openinference.span.kind", "LLM")
	la.PutStr("llm.model_name", c.m.name)
	la.PutStr("llm.provider", c.m.provider)
	la.PutStr("llm.invocation_parameters", mustJSON(map[string]any{"temperature": float64(g.r.IntN(8)) / 10, "max_tokens": 1024}))
	la.PutStr("llm.input_messages.0.message.role", "system")
	la.PutStr("llm.input_messages.0.message.content", system)
	la.PutStr("llm.input_messages.1.message.role", "user")
	la.PutStr("llm.input_messages.1.message.content", question)
	la.PutInt("llm.token_count.prompt", c.inToks)
	if c.failed == "" {
		la.PutStr("llm.output_messages.0.message.role", "assistant")
		la.PutStr("llm.output_messages.0.message.content", c.out)
		la.PutInt("llm.token_count.completion", c.outToks)
		la.PutInt("llm.token_count.total", c.inToks+c.outToks)
	}
	setFailed(llm, c.failed)
	answer := c.out
	if c.failed != "" {
		answer = "Sorry, something went wrong. Please try again in a moment."
	}
	ra.PutStr("output.value", answer)
	ra.PutStr("output.mime_type", "text/plain")
}

// genAIChat sets the OTel GenAI attributes of a chat span.
func (g *gen) genAIChat(sp ptrace.Span, c llmCall, in []any, out any) {
	at := sp.Attributes()
	at.PutStr("gen_ai.operation.name", "chat")
	at.PutStr("gen_ai.system", c.m.provider)
	at.PutStr("gen_ai.request.model", c.m.name)
	at.PutDouble("gen_ai.request.temperature", float64(g.r.IntN(10))/10)
	at.PutStr("gen_ai.input.messages", mustJSON(in))
	at.PutInt("gen_ai.usage.input_tokens", c.inToks)
	if c.failed == "" {
		at.PutStr("gen_ai.response.model", c.m.name)
		at.PutStr("gen_ai.response.id", "chatcmpl-"+g.hexID(12))
		at.PutStr("gen_ai.output.messages", mustJSON([]any{map[string]any{"role": "assistant", "content": out}}))
		at.PutInt("gen_ai.usage.output_tokens", c.outToks)
		reason := "stop"
		if _, ok := out.(string); !ok {
			reason = "tool_call"
		}
		at.PutStr("gen_ai.response.finish_reasons", mustJSON([]string{reason}))
	}
	setFailed(sp, c.failed)
}

func (g *gen) agent(b *traceBuilder, a app, session, user, question string) {
	root := b.span(pcommon.SpanID{}, "invoke_agent "+a.agent, ptrace.SpanKindInternal, 0)
	rid := root.SpanID()
	conv := []any{msg("system", a.system[0]), msg("user", question)}
	texts := []string{a.system[0], question}
	for round := g.r.IntN(3) + 1; round > 0; round-- {
		tool := a.tools[g.r.IntN(len(a.tools))]
		args := map[string]any{"query": g.text(60, 0.6, 10, 400), "limit": 1 + g.r.IntN(20)}
		c := g.call(texts...)
		c.dur, c.outToks = g.ms(600, 0.4, 100, 8000), 20+int64(g.r.IntN(60))
		call := map[string]any{"type": "tool_call", "id": "call_" + g.hexID(10), "name": tool, "arguments": args}
		sp := b.span(rid, "chat "+c.m.name, ptrace.SpanKindClient, c.dur)
		g.genAIChat(sp, c, conv, []any{call})
		if c.failed != "" {
			continue
		}
		result := g.text(300, 1.0, 20, 6000)
		ts := b.span(rid, "execute_tool "+tool, ptrace.SpanKindInternal, g.ms(200, 1.0, 2, 30000))
		ta := ts.Attributes()
		ta.PutStr("gen_ai.operation.name", "execute_tool")
		ta.PutStr("gen_ai.tool.name", tool)
		ta.PutStr("gen_ai.tool.call.id", call["id"].(string))
		ta.PutStr("gen_ai.tool.call.arguments", mustJSON(args))
		ta.PutStr("gen_ai.tool.call.result", result)
		conv = append(conv, map[string]any{"role": "assistant", "tool_calls": []any{call}}, map[string]any{"role": "tool", "content": result})
		texts = append(texts, result)
	}
	c := g.call(texts...)
	sp := b.span(rid, "chat "+c.m.name, ptrace.SpanKindClient, c.dur)
	g.genAIChat(sp, c, conv, c.out)
	conv = append(conv, msg("assistant", c.out))
	at := root.Attributes()
	at.PutStr("gen_ai.operation.name", "invoke_agent")
	at.PutStr("gen_ai.agent.name", a.agent)
	at.PutStr("gen_ai.conversation.id", session)
	at.PutStr("gen_ai.request.model", c.m.name)
	at.PutStr("user.id", user)
	at.PutStr("pydantic_ai.all_messages", mustJSON(conv))
	at.PutStr("final_result", c.out)
	setFailed(root, c.failed)
}

func (g *gen) workflow(b *traceBuilder, a app, session, user, question string) {
	name := []string{"answer", "triage", "draft_reply", "summarize"}[g.r.IntN(4)]
	root := b.span(pcommon.SpanID{}, name+".workflow", ptrace.SpanKindInternal, 0)
	task := b.span(root.SpanID(), "build_prompt.task", ptrace.SpanKindInternal, 0)
	system := a.system[1]
	c := g.call(system, question)
	llm := b.span(task.SpanID(), "openai.chat", ptrace.SpanKindClient, c.dur)
	la := llm.Attributes()
	la.PutStr("llm.request.type", "chat")
	la.PutStr("gen_ai.system", c.m.provider)
	la.PutStr("gen_ai.request.model", c.m.name)
	la.PutDouble("gen_ai.request.temperature", float64(g.r.IntN(10))/10)
	la.PutBool("llm.is_streaming", g.r.IntN(2) == 0)
	la.PutStr("gen_ai.prompt.0.role", "system")
	la.PutStr("gen_ai.prompt.0.content", system)
	la.PutStr("gen_ai.prompt.1.role", "user")
	la.PutStr("gen_ai.prompt.1.content", question)
	la.PutInt("gen_ai.usage.prompt_tokens", c.inToks)
	if c.failed == "" {
		la.PutStr("gen_ai.response.model", c.m.name)
		la.PutStr("gen_ai.completion.0.role", "assistant")
		la.PutStr("gen_ai.completion.0.content", c.out)
		la.PutStr("gen_ai.completion.0.finish_reason", "stop")
		la.PutInt("gen_ai.usage.completion_tokens", c.outToks)
		la.PutInt("llm.usage.total_tokens", c.inToks+c.outToks)
	}
	setFailed(llm, c.failed)
	task.SetEndTimestamp(pcommon.NewTimestampFromTime(b.t.Add(g.ms(2, 0.5, 0, 50))))
	for _, sp := range []ptrace.Span{root, task} {
		at := sp.Attributes()
		kind := "workflow"
		if sp.SpanID() == task.SpanID() {
			kind = "task"
		}
		at.PutStr("traceloop.span.kind", kind)
		at.PutStr("traceloop.workflow.name", name)
		at.PutStr("traceloop.entity.name", sp.Name()[:len(sp.Name())-len(kind)-1])
		at.PutStr("traceloop.entity.input", mustJSON(map[string]any{"args": []any{question}, "kwargs": map[string]any{"user_id": user}}))
		at.PutStr("traceloop.entity.output", mustJSON(c.out))
		at.PutStr("traceloop.association.properties.session_id", session)
	}
	setFailed(root, c.failed)
}

// encSpan is one pool span, OTLP-encoded, with where to patch it.
type encSpan struct {
	b                []byte
	tidOff           int // offset of the 16-byte trace id in b
	startOff, endOff int // offsets of the fixed64 start and end times
	start, end       uint64
	trace            int32 // index in pool.traces
	first            bool  // the trace's first span (its root)
}

type encTrace struct{ res, scope []byte }

// pool is the realistic corpus: traces generated once and encoded, sent
// again and again with new trace ids and times. Requests take consecutive
// runs of its spans (a ring), so that two requests sent at once carry
// different traces and a trace comes back only after the whole pool has
// gone by; a request's first and last trace may be cut, as an SDK's batch
// exporter cuts them.
type pool struct {
	spans  []encSpan
	roots  []int // index of each trace's root in spans
	traces []encTrace
	base   int64 // the time the spans end around, unix ns
	cursor atomic.Uint64
	bytes  int
}

// newPool generates traces until it holds at least spans spans, ending at
// base.
func newPool(seed uint64, spans int, base time.Time) *pool {
	g := newGen(seed, base)
	p := &pool{base: base.UnixNano()}
	for len(p.spans) < spans {
		td := ptrace.NewTraces()
		g.trace(td)
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			panic(err)
		}
		p.add(b)
	}
	return p
}

// add splits an encoded one-trace request into its resource, scope and spans.
func (p *pool) add(req []byte) {
	var t encTrace
	ti := int32(len(p.traces))
	first := true
	fields(req, func(num protowire.Number, rs []byte) {
		fields(rs, func(num protowire.Number, v []byte) {
			switch num {
			case 1:
				t.res = v
			case 2:
				fields(v, func(num protowire.Number, v []byte) {
					switch num {
					case 1:
						t.scope = v
					case 2:
						s := encSpan{b: v, trace: ti, first: first}
						if first {
							p.roots = append(p.roots, len(p.spans))
						}
						first = false
						spanOffsets(&s)
						p.spans = append(p.spans, s)
						p.bytes += len(v)
					}
				})
			}
		})
	})
	p.traces = append(p.traces, t)
}

// fields calls f with each length-delimited field of a message.
func fields(b []byte, f func(protowire.Number, []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			panic(protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				panic(protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			panic(protowire.ParseError(n))
		}
		f(num, v)
		b = b[n:]
	}
}

// spanOffsets finds the trace id (field 1) and times (fields 7 and 8,
// fixed64) of an encoded OTLP Span.
func spanOffsets(s *encSpan) {
	b, off := s.b, 0
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		off += n
		switch {
		case num == 1 && typ == protowire.BytesType:
			_, m := protowire.ConsumeVarint(b[off:])
			s.tidOff = off + m
		case num == 7 && typ == protowire.Fixed64Type:
			s.startOff, s.start = off, binary.LittleEndian.Uint64(b[off:])
		case num == 8 && typ == protowire.Fixed64Type:
			s.endOff, s.end = off, binary.LittleEndian.Uint64(b[off:])
		}
		off += protowire.ConsumeFieldValue(num, typ, b[off:])
	}
}

// request is an OTLP request of n spans whose traces get the ids
// (k, id) — bytes 6-7 the trace's index k in the request, bytes 8-15 id —
// and end now. A one-span request is a trace's root alone (the freshness
// probe, trace id = id).
func (p *pool) request(id int64, n int) []byte {
	L := uint64(len(p.spans))
	var s uint64
	if n == 1 {
		s = uint64(p.roots[uint64(id)%uint64(len(p.roots))])
	} else {
		s = (p.cursor.Add(uint64(n)) - uint64(n)) % L
	}
	shift := uint64(time.Now().UnixNano() - p.base)
	out := make([]byte, 0, n*(p.bytes/len(p.spans)+8)+256)
	k := 0
	for i := 0; i < n; k++ {
		t := &p.traces[p.spans[(s+uint64(i))%L].trace]
		j := i + 1
		for j < n && !p.spans[(s+uint64(j))%L].first {
			j++
		}
		ss := protowire.SizeTag(1) + protowire.SizeBytes(len(t.scope))
		for m := i; m < j; m++ {
			ss += protowire.SizeTag(2) + protowire.SizeBytes(len(p.spans[(s+uint64(m))%L].b))
		}
		rs := protowire.SizeTag(1) + protowire.SizeBytes(len(t.res)) + protowire.SizeTag(2) + protowire.SizeBytes(ss)
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(rs))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, t.res)
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(ss))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, t.scope)
		for m := i; m < j; m++ {
			sp := &p.spans[(s+uint64(m))%L]
			out = protowire.AppendTag(out, 2, protowire.BytesType)
			out = protowire.AppendVarint(out, uint64(len(sp.b)))
			at := len(out)
			out = append(out, sp.b...)
			tid := out[at+sp.tidOff : at+sp.tidOff+16]
			clear(tid[:6])
			binary.BigEndian.PutUint16(tid[6:], uint16(k))
			binary.BigEndian.PutUint64(tid[8:], uint64(id))
			binary.LittleEndian.PutUint64(out[at+sp.startOff:], sp.start+shift)
			binary.LittleEndian.PutUint64(out[at+sp.endOff:], sp.end+shift)
		}
		i = j
	}
	return out
}
