// A LangChain chain instrumented by OpenInference
// (@arizeai/openinference-instrumentation-langchain): a retriever, a prompt
// template, a chat model (@langchain/openai, chat completions) and an
// output parser, run once.
import { trace } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { RunnableSequence, RunnablePassthrough } from "@langchain/core/runnables";
import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { ChatOpenAI } from "@langchain/openai";

// The chain's spans are started by the instrumentation: the trace id is
// read from the first span that ends, and the spans are counted so that the
// test waits for all of them.
let traceId;
let spanCount = 0;
const traceIds = { onStart() {}, onEnd(span) { traceId ??= span.spanContext().traceId; spanCount++; }, forceFlush: async () => {}, shutdown: async () => {} };
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "sdkcompat-langchain" }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({
    url: process.env.ASSAY_OTLP_URL,
    headers: { Authorization: `ApiKey ${process.env.ASSAY_API_KEY}` },
  })), traceIds],
});
provider.register();
// An ES module is not patched on import: the instrumentation is given the
// callbacks module.
new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);

class WeatherRetriever extends BaseRetriever {
  lc_namespace = ["sdkcompat", "retrievers"];
  async _getRelevantDocuments(query) {
    return [
      new Document({ pageContent: "Paris is mild in spring.", metadata: { source: "kb", id: "doc-paris" } }),
      new Document({ pageContent: "Rome is warm.", metadata: { source: "kb", id: "doc-rome" } }),
    ];
  }
}

const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are a weather assistant. Use this context: {context}"],
  ["human", "{question}"],
]);
const model = new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0, apiKey: process.env.OPENAI_API_KEY,
  configuration: { baseURL: process.env.OPENAI_BASE_URL } });
const chain = RunnableSequence.from([
  { context: new WeatherRetriever().pipe((docs) => docs.map((d) => d.pageContent).join("\n")), question: new RunnablePassthrough() },
  prompt, model, new StringOutputParser(),
]);

const answer = await chain.invoke("What is the weather in Paris today?");
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ trace_ids: [traceId], answer, span_count: spanCount }));
