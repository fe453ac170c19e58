// Traceloop's SDK (@traceloop/node-server-sdk, OpenLLMetry) with its OpenAI
// instrumentation, exporting to our OTLP endpoint with our API key: a
// workflow that runs a task and a chat call offered a tool.
import * as traceloop from "@traceloop/node-server-sdk";
import { trace } from "@opentelemetry/api";
import OpenAI from "openai";

traceloop.initialize({
  appName: "sdkcompat-traceloop",
  // The SDK posts to <baseUrl>/v1/traces.
  baseUrl: process.env.ASSAY_OTLP_URL.replace(/\/v1\/traces$/, ""),
  headers: { Authorization: `ApiKey ${process.env.ASSAY_API_KEY}` },
  disableBatch: true,
  traceloopSyncEnabled: false,
  // An ES module is not patched on import: the SDK is given the client.
  instrumentModules: { openAI: OpenAI },
});
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });

let traceId, usage;
const answer = await traceloop.withWorkflow({ name: "weather_report" }, async () => {
  traceId = trace.getActiveSpan().spanContext().traceId;
  const forecast = await traceloop.withTask({ name: "fetch_forecast" }, async () => ({ city: "Paris", temperature: "18C" }));
  const res = await client.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "You are a weather assistant." },
      { role: "user", content: `Describe this forecast: ${JSON.stringify(forecast)}` },
    ],
    tools: [{ type: "function", function: { name: "get_weather", description: "Current weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }],
  });
  usage = res.usage;
  return res.choices[0].message.content;
});
await traceloop.forceFlush();
console.log(JSON.stringify({ trace_ids: [traceId], answer, usage }));
