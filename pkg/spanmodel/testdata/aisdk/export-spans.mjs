// Runs the Vercel AI SDK (with its mock models, no network) under
// experimental_telemetry and writes the spans it exports as golden inputs
// for services/tracing/internal/normalize (testdata/golden/traces).
// Usage: npm ci && node export-spans.mjs <out dir>
import { writeFileSync, mkdirSync } from 'node:fs';
import { generateText, streamText, embed, tool, jsonSchema, stepCountIs, simulateReadableStream } from 'ai';
import { MockLanguageModelV2, MockEmbeddingModelV2 } from 'ai/test';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context } from '@opentelemetry/api';

const out = process.argv[2] ?? 'out';
mkdirSync(out, { recursive: true });
// Without a context manager every span would be a root.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('ai');
const telemetry = (functionId) => ({
  isEnabled: true, tracer, functionId, metadata: { sessionId: 'sess-1', userId: 'user-1' },
});
const response = (id) => ({ id, modelId: 'gpt-4o-mini-2024-07-18', timestamp: new Date('2025-01-05T10:00:01Z') });
const kinds = ['SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const ns = ([s, n]) => BigInt(s) * 1000000000n + BigInt(n);

function save(name, about) {
  const spans = exporter.getFinishedSpans();
  exporter.reset();
  const t0 = spans.map((s) => ns(s.startTime)).reduce((a, b) => (a < b ? a : b));
  const doc = {
    about,
    spans: spans.map((s) => ({
      span_id: s.spanContext().spanId,
      parent_id: s.parentSpanContext?.spanId ?? '',
      name: s.name,
      kind: kinds[s.kind],
      // Offsets from the trace's first start, in µs: the test places the
      // trace at a fixed time.
      start_us: Number((ns(s.startTime) - t0) / 1000n),
      end_us: Number((ns(s.endTime) - t0) / 1000n),
      attributes: s.attributes,
    })),
  };
  writeFileSync(`${out}/${name}.json`, JSON.stringify(doc, null, 1) + '\n');
}

const usage = (i, o) => ({ inputTokens: i, outputTokens: o, totalTokens: i + o });

// generate: one model call.
await generateText({
  model: new MockLanguageModelV2({
    provider: 'openai.chat', modelId: 'gpt-4o-mini',
    doGenerate: async () => ({
      content: [{ type: 'text', text: 'Waves fold into foam' }], finishReason: 'stop',
      usage: usage(75, 14), warnings: [], response: response('chatcmpl-gen'),
    }),
  }),
  prompt: 'Write a haiku about the sea', experimental_telemetry: telemetry('haiku'),
});
save('vercel_ai_generate', 'ai@5 generateText with MockLanguageModelV2 (75/14 tokens): root ai.generateText, one ai.generateText.doGenerate');

// stream: one streamed model call.
const s = streamText({
  model: new MockLanguageModelV2({
    provider: 'openai.chat', modelId: 'gpt-4o-mini',
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'response-metadata', ...response('chatcmpl-stream') },
          { type: 'text-start', id: 't1' },
          { type: 'text-delta', id: 't1', delta: 'Waves fold ' },
          { type: 'text-delta', id: 't1', delta: 'into foam' },
          { type: 'text-end', id: 't1' },
          { type: 'finish', finishReason: 'stop', usage: usage(40, 6) },
        ],
      }),
    }),
  }),
  prompt: 'Write a haiku about the sea', experimental_telemetry: telemetry('haiku-stream'),
});
await s.consumeStream();
await s.text;
save('vercel_ai_stream', 'ai@5 streamText with MockLanguageModelV2 (40/6 tokens): root ai.streamText, one ai.streamText.doStream');

// tool step: the model calls a tool, then answers; two model calls.
let call = 0;
await generateText({
  model: new MockLanguageModelV2({
    provider: 'openai.chat', modelId: 'gpt-4o-mini',
    doGenerate: async () => (call++ === 0
      ? {
        content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{"city":"Paris"}' }],
        finishReason: 'tool-calls', usage: usage(50, 10), warnings: [], response: response('chatcmpl-tool-1'),
      }
      : {
        content: [{ type: 'text', text: 'It is sunny in Paris.' }], finishReason: 'stop',
        usage: usage(25, 4), warnings: [], response: response('chatcmpl-tool-2'),
      }),
  }),
  tools: {
    weather: tool({
      description: 'Weather in a city',
      inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      execute: async ({ city }) => ({ city, forecast: 'sunny' }),
    }),
  },
  stopWhen: stepCountIs(2),
  prompt: 'Weather in Paris?', experimental_telemetry: telemetry('weather'),
});
save('vercel_ai_tool_step', 'ai@5 generateText with a tool and stopWhen stepCountIs(2) (50/10 then 25/4 tokens): root ai.generateText, two ai.generateText.doGenerate, one ai.toolCall');

// embed.
await embed({
  model: new MockEmbeddingModelV2({
    provider: 'openai.embedding', modelId: 'text-embedding-3-small',
    doEmbed: async ({ values }) => ({ embeddings: values.map(() => [0.1, 0.2, 0.3]), usage: { tokens: 5 } }),
  }),
  value: 'sunny day at the beach', experimental_telemetry: telemetry('embed'),
});
save('vercel_ai_embed', 'ai@5 embed with MockEmbeddingModelV2 (5 tokens): root ai.embed, one ai.embed.doEmbed');
