import { describe, expect, it } from "vitest";
import { lowerIsBetter, metricName, stepName, variantLabel } from "./stepNames";

const book = {
  apps: new Map([["a1", "Capitals bot"]]),
  variants: new Map([["v1", "Capitals bot"]]),
  evaluators: new Map([["e1", "Capital exact"]]),
};

describe("stepName", () => {
  it("names steps by application, variant and revision, and by evaluator, never by generated slugs", () => {
    const app = { key: "application-3de4d96cbf1e", type: "invocation" as const, origin: "auto" as const,
      references: { application: { id: "a1", slug: "3de4d96cbf1e" }, application_variant: { id: "v1", slug: "a8f5de416b6f" }, application_revision: { version: "3" } } };
    expect(stepName(app.key, app, book)).toBe("Capitals bot v3");
    const ev = { key: "evaluator-64e6a4c031c3", type: "annotation" as const, origin: "auto" as const, references: { evaluator: { id: "e1" } } };
    expect(stepName(ev.key, ev, book)).toBe("Capital exact");
    expect(stepName("evaluator-64e6a4c031c3", undefined, book)).toBe("evaluator");
  });
  it("says which way is better", () => {
    expect(lowerIsBetter("attributes.ag.metrics.duration.cumulative")).toBe(true);
    expect(lowerIsBetter("attributes.ag.metrics.costs.cumulative.total")).toBe(true);
    expect(lowerIsBetter("attributes.ag.data.outputs.success")).toBe(false);
    expect(lowerIsBetter("attributes.ag.data.outputs.score")).toBe(false);
    expect(metricName("attributes.ag.data.outputs.success")).toBe("success");
  });
});

describe("variantLabel", () => {
  it("never shows a generated slug", () => {
    expect(variantLabel("a8f5de416b6f")).toBe("default");
    expect(variantLabel("a8f5de416b6f", "Capitals bot")).toBe("Capitals bot");
    expect(variantLabel("terse")).toBe("terse");
  });
});
