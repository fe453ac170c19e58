// Runs the Vercel AI SDK v7 against the local model server with one of the
// two @ai-sdk/otel integrations (AISDK_INTEGRATION=otel for OpenTelemetry(),
// the GenAI conventions; legacy for LegacyOpenTelemetry(), the ai.* spans)
// and exports the spans to Assay over OTLP/HTTP. Four calls, each its own
// trace: a generateText tool loop (two steps, one tool), a streamText, a
// generateObject and an embedMany. Prints, last, {"traces": {call: id},
// "usage": {call: usage as the SDK saw it}, "tool_result": ...}.
import { writeFileSync, mkdirSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { generateText, streamText, generateObject, embedMany, tool, stepCountIs, jsonSchema } from 'ai';
import { OpenTelemetry, LegacyOpenTelemetry } from '@ai-sdk/otel';
import { createOpenAI } from '@ai-sdk/openai';

const exporter = new OTLPTraceExporter({
  url: process.env.ASSAY_OTLP_URL,
  headers: { Authorization: `ApiKey ${process.env.ASSAY_API_KEY}` },
});
// Roots as they end, so that each call's trace id is known.
const roots = [];
const rootRecorder = {
  onStart() {}, forceFlush: async () => {}, shutdown: async () => {},
  onEnd(span) { if (!span.parentSpanContext) roots.push(span.spanContext().traceId); },
};
// AISDK_DUMP=<dir> also writes each call's spans, as exported, in the
// format of pkg/spanmodel/testdata/golden/traces (times as offsets from the
// trace's first start), named <AISDK_DUMP_PREFIX>_<call>.json.
const dumpDir = process.env.AISDK_DUMP;
const memory = new InMemorySpanExporter();
const kinds = ['SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const ns = ([s, n]) => BigInt(s) * 1000000000n + BigInt(n);
function dump(call, traceId, about) {
  if (!dumpDir) return;
  const spans = memory.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const t0 = spans.map((s) => ns(s.startTime)).reduce((a, b) => (a < b ? a : b));
  const doc = {
    about,
    spans: spans.map((s) => ({
      span_id: s.spanContext().spanId, parent_id: s.parentSpanContext?.spanId ?? '', name: s.name, kind: kinds[s.kind],
      start_us: Number((ns(s.startTime) - t0) / 1000n), end_us: Number((ns(s.endTime) - t0) / 1000n), attributes: s.attributes,
    })),
  };
  mkdirSync(dumpDir, { recursive: true });
  writeFileSync(`${dumpDir}/${process.env.AISDK_DUMP_PREFIX}_${call}.json`, JSON.stringify(doc, null, 1) + '\n');
}
const provider = new NodeTracerProvider({
  spanProcessors: [rootRecorder, new BatchSpanProcessor(exporter), new SimpleSpanProcessor(memory)],
});
provider.register();

const legacy = process.env.AISDK_INTEGRATION === 'legacy';
const integration = legacy
  ? new LegacyOpenTelemetry({ tracer: trace.getTracer('ai') })
  : new OpenTelemetry({ tracer: trace.getTracer('gen_ai'), runtimeContext: true });
const telemetry = (functionId) => ({
  isEnabled: true, functionId, integrations: [integration],
  includeRuntimeContext: { userId: true, sessionId: true },
});
const runtimeContext = { userId: 'user-7', sessionId: 'session-7' };

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = openai.chat('gpt-4o-mini');
const traces = {};
const usage = {};
const lastRoot = () => roots[roots.length - 1];

// A tool loop: the model server is scripted to call the tool first, then
// answers with text.
const weather = tool({
  description: 'The weather in a city',
  inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }) => ({ city, forecast: 'sunny', celsius: 21 }),
});
const gen = await generateText({
  model, system: 'You are a weather bot.', prompt: 'What is the weather in Paris?',
  tools: { weather }, stopWhen: stepCountIs(2), runtimeContext, telemetry: telemetry('weather-agent'),
});
traces.generate = lastRoot();
usage.generate = gen.totalUsage;

const st = streamText({ model, prompt: 'Write a haiku about the sea', runtimeContext, telemetry: telemetry('haiku') });
let text = '';
for await (const d of st.textStream) text += d;
usage.stream = await st.totalUsage;
traces.stream = lastRoot();

const obj = await generateObject({
  model, prompt: 'A city and its country',
  schema: jsonSchema({ type: 'object', properties: { city: { type: 'string' }, country: { type: 'string' } }, required: ['city', 'country'], additionalProperties: false }),
  runtimeContext, telemetry: telemetry('city'),
});
usage.object = obj.usage;
traces.object = lastRoot();

const emb = await embedMany({
  model: openai.embedding('text-embedding-3-small'), values: ['sunny day', 'rainy night'],
  telemetry: telemetry('embed'),
});
usage.embed = emb.usage;
traces.embed = lastRoot();

const label = `ai@7.0.185 + @ai-sdk/otel 1.0.185 ${legacy ? 'LegacyOpenTelemetry()' : 'OpenTelemetry()'}`;
const calls = {
  generate: 'generateText with one tool and stopWhen stepCountIs(2) against the local model server (tool call, then text)',
  stream: 'streamText', object: 'generateObject with a JSON schema', embed: 'embedMany of two values',
};
for (const [call, what] of Object.entries(calls)) dump(call, traces[call], `${label}: ${what}`);
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ traces, usage, text, object: obj.object }));
