import { describe, expect, it } from "vitest";
import { verdict } from "./ComparePage";

describe("comparison verdicts", () => {
  it("takes the registry's corrected verdict over the 95% interval", () => {
    // Below zero at 95%, but not once corrected for the comparison's tests.
    const side = { delta: -0.1, ci: { low: -0.19, high: -0.01 }, verdict: "inconclusive" as const };
    expect(verdict("attributes.ag.data.outputs.success", side, "higher")).toBe("inconclusive");
    expect(verdict("attributes.ag.data.outputs.success", { ...side, verdict: "regressed" }, "higher")).toBe("regressed");
  });
  it("reads a registry without verdicts by the interval and the direction", () => {
    expect(verdict("attributes.ag.metrics.duration.cumulative", { delta: -5, ci: { low: -8, high: -2 } })).toBe("improved");
    expect(verdict("attributes.ag.data.outputs.score", { delta: -5, ci: { low: -8, high: -2 } })).toBe("regressed");
    expect(verdict("attributes.ag.data.outputs.score", { delta: 0, ci: { low: 0, high: 0 }, verdict: "inconclusive" })).toBe("same");
    expect(verdict("attributes.ag.data.outputs.score", { delta: undefined })).toBe("none");
  });
});
