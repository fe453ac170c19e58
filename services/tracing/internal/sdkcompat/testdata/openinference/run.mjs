// The openai client instrumented by OpenInference
// (@arizeai/openinference-instrumentation-openai): a chat call with tools,
// a streamed call and an embeddings call, under hand-made OpenInference
// AGENT and RETRIEVER spans written with
// @arizeai/openinference-semantic-conventions, as Phoenix users do.
import { trace, context, SpanKind } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { SemanticConventions as SC, OpenInferenceSpanKind, MimeType } from "@arizeai/openinference-semantic-conventions";
import OpenAI from "openai";

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "sdkcompat-openinference" }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({
    url: process.env.ASSAY_OTLP_URL,
    headers: { Authorization: `ApiKey ${process.env.ASSAY_API_KEY}` },
  }))],
});
provider.register();
// An ES module is not patched on import: the instrumentation is given the
// client class.
new OpenAIInstrumentation({ tracerProvider: provider }).manuallyInstrument({ OpenAI });
const tracer = trace.getTracer("sdkcompat-openinference");
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = "gpt-4o-mini";
const question = "What is the weather in Paris today?";
const usages = [];

const root = tracer.startSpan("weather-agent", { kind: SpanKind.INTERNAL, attributes: {
  [SC.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.AGENT,
  [SC.INPUT_VALUE]: JSON.stringify({ question }), [SC.INPUT_MIME_TYPE]: MimeType.JSON,
  [`${SC.LLM_INPUT_MESSAGES}.0.${SC.MESSAGE_ROLE}`]: "system",
  [`${SC.LLM_INPUT_MESSAGES}.0.${SC.MESSAGE_CONTENT}`]: "You are a weather assistant.",
  [`${SC.LLM_INPUT_MESSAGES}.1.${SC.MESSAGE_ROLE}`]: "user",
  [`${SC.LLM_INPUT_MESSAGES}.1.${SC.MESSAGE_CONTENT}`]: question,
  [SC.SESSION_ID]: "sdkcompat-session",
} });
let answer, streamed;
await context.with(trace.setSpan(context.active(), root), async () => {
  const r = tracer.startSpan("kb-retriever", { attributes: {
    [SC.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.RETRIEVER,
    [SC.INPUT_VALUE]: question, [SC.INPUT_MIME_TYPE]: MimeType.TEXT,
    [`${SC.RETRIEVAL_DOCUMENTS}.0.${SC.DOCUMENT_ID}`]: "doc-paris",
    [`${SC.RETRIEVAL_DOCUMENTS}.0.${SC.DOCUMENT_CONTENT}`]: "Paris is mild in spring.",
    [`${SC.RETRIEVAL_DOCUMENTS}.0.${SC.DOCUMENT_SCORE}`]: 0.92,
    [`${SC.RETRIEVAL_DOCUMENTS}.0.${SC.DOCUMENT_METADATA}`]: JSON.stringify({ source: "kb" }),
    [`${SC.RETRIEVAL_DOCUMENTS}.1.${SC.DOCUMENT_ID}`]: "doc-rome",
    [`${SC.RETRIEVAL_DOCUMENTS}.1.${SC.DOCUMENT_CONTENT}`]: "Rome is warm.",
    [`${SC.RETRIEVAL_DOCUMENTS}.1.${SC.DOCUMENT_SCORE}`]: 0.41,
  } });
  r.end();
  const res = await client.chat.completions.create({
    model,
    messages: [{ role: "system", content: "You are a weather assistant." }, { role: "user", content: question }],
    tools: [{ type: "function", function: { name: "get_weather", description: "Current weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }],
  });
  usages.push(res.usage);
  answer = res.choices[0].message.content;
  const stream = await client.chat.completions.create({
    model, stream: true, stream_options: { include_usage: true },
    messages: [{ role: "user", content: "Say it again, please." }],
  });
  streamed = "";
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
  await client.embeddings.create({ model: "text-embedding-3-small", input: "Paris weather" });
});
root.setAttributes({
  [SC.OUTPUT_VALUE]: answer, [SC.OUTPUT_MIME_TYPE]: MimeType.TEXT,
  [`${SC.LLM_OUTPUT_MESSAGES}.0.${SC.MESSAGE_ROLE}`]: "assistant",
  [`${SC.LLM_OUTPUT_MESSAGES}.0.${SC.MESSAGE_CONTENT}`]: answer,
});
root.end();
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ trace_ids: [root.spanContext().traceId], usages, answer, streamed }));
