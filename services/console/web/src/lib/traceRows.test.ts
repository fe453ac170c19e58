import { describe, expect, it } from "vitest";
import type { Span } from "../api/tracing";
import { traceRow } from "./traceRows";

const span = (parent: string | undefined, data: unknown) =>
  ({ trace_id: "t", span_id: parent ? "c" : "r", parent_id: parent, span_name: "x", start_time: "", end_time: "", attributes: { ag: { data } } }) as unknown as Span;

describe("traceRow", () => {
  it("takes the root's inputs as columns and its output as correct_answer", () => {
    expect(traceRow([span("r", { inputs: { q: "no" } }), span(undefined, { inputs: { country: "France" }, outputs: "Paris" })])).toEqual({
      country: "France",
      correct_answer: "Paris",
    });
  });
  it("keeps a non-object input in one column and objects as JSON", () => {
    expect(traceRow([span(undefined, { inputs: "hi", outputs: { role: "assistant", content: "yo" } })])).toEqual({
      input: "hi",
      correct_answer: '{"role":"assistant","content":"yo"}',
    });
  });
});
