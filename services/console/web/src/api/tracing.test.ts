import { describe, expect, it } from "vitest";
import { figures, unpricedModels, type Span } from "./tracing";

function span(ag: Record<string, unknown>): Span {
  return {
    trace_id: "0af7651916cd43dd8448eb211c80319c",
    span_id: "b7ad6b7169203331",
    span_name: "chat",
    start_time: "2026-06-01T12:00:00Z",
    end_time: "2026-06-01T12:00:01Z",
    attributes: { ag },
  } as unknown as Span;
}

describe("figures", () => {
  it("says which model has no price, rather than a cost of zero", () => {
    const f = figures(span({ meta: { pricing: { unpriced: true, model: "acme-llm-7" } }, metrics: { tokens: { incremental: { total: 3 } } } }));
    expect(f.unpricedModel).toBe("acme-llm-7");
    expect(f.cost).toBeUndefined();
  });
  it("names the source that priced a span", () => {
    const f = figures(
      span({ meta: { pricing: { source: "genai-prices@0.1.8", provider: "openai", model: "gpt-5-mini" } }, metrics: { costs: { incremental: { total: 0.002 } } } }),
    );
    expect(f.unpricedModel).toBeUndefined();
    expect(f.pricedBy).toBe("genai-prices@0.1.8");
    expect(f.cost).toBe(0.002);
  });
});

describe("unpricedModels", () => {
  it("lists each unpriced model of a trace once", () => {
    const unpriced = (model: string) => span({ meta: { pricing: { unpriced: true, model } } });
    const priced = span({ meta: { pricing: { source: "override" } } });
    expect(unpricedModels([priced, unpriced("a"), unpriced("b"), unpriced("a")])).toEqual(["a", "b"]);
    expect(unpricedModels([priced])).toEqual([]);
  });
});
