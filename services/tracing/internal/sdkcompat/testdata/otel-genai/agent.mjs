// An agent traced by hand with the OpenTelemetry JS SDK and the GenAI
// semantic conventions (as frameworks without their own instrumentation
// do): an invoke_agent root with system instructions, messages and tool
// definitions; a retrieval span with its documents; two real chat calls to
// the model server around an execute_tool span. The usage recorded on each
// chat span is the one the server answered; the root carries none (its
// cumulative tokens are its model calls').
import { trace, context, SpanKind } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import OpenAI from "openai";

const exporter = new OTLPTraceExporter({
  url: process.env.ASSAY_OTLP_URL,
  headers: { Authorization: `ApiKey ${process.env.ASSAY_API_KEY}` },
});
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "sdkcompat-otel-genai" }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
provider.register();
const tracer = trace.getTracer("sdkcompat-genai");
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = "gpt-4o-mini";

const system = "You are a weather assistant.";
const question = "What is the weather in Paris today?";
const tools = [{ type: "function", name: "get_weather", description: "Current weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
const usages = [];

const parts = (m) => ({ role: m.role, parts: [{ type: "text", content: m.content }] });

async function chat(messages, semconvMessages) {
  return tracer.startActiveSpan(`chat ${model}`, { kind: SpanKind.CLIENT }, async (span) => {
    span.setAttributes({
      "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model,
      "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: system }]),
      "gen_ai.input.messages": JSON.stringify(semconvMessages),
      "gen_ai.tool.definitions": JSON.stringify(tools),
    });
    const res = await client.chat.completions.create({
      model, messages: [{ role: "system", content: system }, ...messages],
      tools: tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
    });
    const msg = res.choices[0].message;
    const out = { role: "assistant", parts: [], finish_reason: res.choices[0].finish_reason };
    if (msg.content) out.parts.push({ type: "text", content: msg.content });
    for (const c of msg.tool_calls ?? []) out.parts.push({ type: "tool_call", id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) });
    const cached = res.usage.prompt_tokens_details?.cached_tokens ?? 0;
    span.setAttributes({
      "gen_ai.response.id": res.id, "gen_ai.response.model": res.model,
      "gen_ai.response.finish_reasons": [res.choices[0].finish_reason],
      "gen_ai.usage.input_tokens": res.usage.prompt_tokens, "gen_ai.usage.output_tokens": res.usage.completion_tokens,
      "gen_ai.output.messages": JSON.stringify([out]),
    });
    if (cached) span.setAttribute("gen_ai.usage.cache_read.input_tokens", cached);
    usages.push({ prompt: res.usage.prompt_tokens, completion: res.usage.completion_tokens, cached });
    span.end();
    return { msg, out };
  });
}

const root = tracer.startSpan("invoke_agent weather", { kind: SpanKind.INTERNAL });
root.setAttributes({
  "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather", "gen_ai.provider.name": "openai",
  "gen_ai.request.model": model,
  "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: system }]),
  "gen_ai.input.messages": JSON.stringify([parts({ role: "user", content: question })]),
  "gen_ai.tool.definitions": JSON.stringify(tools),
});
let answer;
await context.with(trace.setSpan(context.active(), root), async () => {
  await tracer.startActiveSpan("retrieval weather-kb", { kind: SpanKind.CLIENT }, async (span) => {
    span.setAttributes({
      "gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "weather-kb",
      "gen_ai.retrieval.query.text": question,
      "gen_ai.retrieval.documents": JSON.stringify([{ id: "doc-paris", score: 0.92, content: "Paris is mild in spring." }, { id: "doc-rome", score: 0.41 }]),
    });
    span.end();
  });
  const history = [{ role: "user", content: question }];
  const first = await chat(history, [parts(history[0])]);
  const call = first.msg.tool_calls[0];
  const result = { city: "Paris", temperature: "18C" };
  await tracer.startActiveSpan(`execute_tool ${call.function.name}`, async (span) => {
    span.setAttributes({
      "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.function.name, "gen_ai.tool.call.id": call.id,
      "gen_ai.tool.type": "function", "gen_ai.tool.call.arguments": call.function.arguments,
      "gen_ai.tool.call.result": JSON.stringify(result),
    });
    span.end();
  });
  history.push(first.msg, { role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
  const second = await chat(history, [parts(history[0]), first.out,
    { role: "tool", parts: [{ type: "tool_call_response", id: call.id, response: result }] }]);
  answer = second.msg.content;
  root.setAttribute("gen_ai.output.messages", JSON.stringify([second.out]));
});
root.end();
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ trace_ids: [root.spanContext().traceId], usages, answer }));
