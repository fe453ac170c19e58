// Langfuse JS SDK v4 with its DEFAULT exporter: LangfuseSpanProcessor
// builds POST {baseUrl}/api/public/otel/v1/traces with
// Authorization: Basic base64(publicKey:secretKey). Our API key
// "<prefix>.<secret>" is the pair (public key = prefix, secret key =
// secret). One trace: a root span that updates its trace (user, session,
// tags, metadata, input/output), a generation with a cached usage bucket,
// a tool (with a base64 image the SDK tries to upload as media), a second
// generation with explicit costs, an event and an ERROR-level retriever.
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { LangfuseSpanProcessor } from "@langfuse/otel";
import { startActiveObservation } from "@langfuse/tracing";
import OpenAI from "openai";

const key = process.env.ASSAY_API_KEY;
const dot = key.indexOf(".");
const processor = new LangfuseSpanProcessor({
  baseUrl: process.env.ASSAY_BASE_URL,
  publicKey: key.slice(0, dot),
  secretKey: key.slice(dot + 1),
  environment: "sdkcompat",
  release: "r-1",
});
const provider = new NodeTracerProvider({ spanProcessors: [processor] });
provider.register();

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = "gpt-4o-mini";
const question = "What is two plus two?";
const out = { usage: [] };

await startActiveObservation("qa-pipeline", async (root) => {
  out.trace_ids = [root.traceId];
  root.update({ input: { question } });
  root.updateTrace({
    name: "qa-trace", userId: "user-7", sessionId: "sess-9", tags: ["sdkcompat", "langfuse"],
    metadata: { tenant: "acme" }, input: { question },
  });

  const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: question }];
  const gen = root.startObservation("chat-1", { model, modelParameters: { temperature: 0, maxTokens: 50 }, input: messages },
    { asType: "generation" });
  const r1 = await openai.chat.completions.create({ model, messages, temperature: 0, max_tokens: 50 });
  const u1 = r1.usage;
  // Anthropic-style buckets: "input" excludes the cached part, which is
  // its own bucket.
  const cached = Math.min(3, u1.prompt_tokens);
  gen.update({
    output: r1.choices[0].message, completionStartTime: new Date(),
    usageDetails: { input: u1.prompt_tokens - cached, input_cached_tokens: cached, output: u1.completion_tokens },
  });
  gen.end();
  out.usage.push({ prompt: u1.prompt_tokens, completion: u1.completion_tokens, cached });
  out.answer = r1.choices[0].message.content;

  const tool = root.startObservation("calculator",
    { input: { expression: "2+2", image: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" } },
    { asType: "tool" });
  tool.update({ output: { result: 4 } });
  tool.end();

  const m2 = [{ role: "user", content: "Say it in words." }];
  const gen2 = root.startObservation("chat-2", { model, input: m2 }, { asType: "generation" });
  const r2 = await openai.chat.completions.create({ model, messages: m2 });
  const u2 = r2.usage;
  gen2.update({
    output: r2.choices[0].message,
    usageDetails: { input: u2.prompt_tokens, output: u2.completion_tokens },
    costDetails: { input: 0.01, output: 0.02, total: 0.03 },
  });
  gen2.end();
  out.usage.push({ prompt: u2.prompt_tokens, completion: u2.completion_tokens, cached: 0 });

  root.startObservation("user-feedback", { input: "thumbs up" }, { asType: "event" });
  root.startObservation("fetch-docs", { input: { query: "2+2" }, level: "ERROR", statusMessage: "index unavailable" },
    { asType: "retriever" }).end();

  root.update({ output: { answer: out.answer } });
  root.updateTrace({ output: { answer: out.answer } });
});

await processor.forceFlush();
await provider.shutdown();
console.log(JSON.stringify(out));
