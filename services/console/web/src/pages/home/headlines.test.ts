import { describe, expect, it } from "vitest";
import { headlines } from "./headlines";

describe("headlines", () => {
  it("names scores by evaluator, a boolean as its pass rate and a number as its mean", () => {
    const steps = [
      { key: "testset-abc", type: "input" as const, origin: "auto" as const },
      { key: "evaluator-47e45b000217", type: "annotation" as const, origin: "auto" as const, references: { evaluator: { id: "e1", slug: "47e45b000217" } } },
      { key: "evaluator-judge", type: "annotation" as const, origin: "auto" as const, references: { evaluator: { id: "e2", slug: "judge" } } },
    ];
    const m = {
      id: "m",
      run_id: "r",
      data: {
        "evaluator-47e45b000217": {
          "attributes.ag.data.outputs.success": { type: "binary", freq: [{ value: true, count: 2, density: 0.67 }, { value: false, count: 1, density: 0.33 }] },
          "attributes.ag.metrics.duration.cumulative": { type: "numeric/continuous", mean: 12 },
        },
        "evaluator-judge": {
          "attributes.ag.data.outputs.score": { type: "numeric/continuous", mean: 0.756, count: 3 },
          "attributes.ag.data.outputs.reason": { type: "string" },
        },
      },
    };
    const evs = [{ id: "e1", slug: "47e45b000217", name: "Capital exact" }, { id: "e2", slug: "judge" }];
    expect(headlines(m, steps, evs).map((h) => [h.label, h.value])).toEqual([
      ["Capital exact", "67%"],
      ["judge · score", "0.76"],
    ]);
  });
  it("says an evaluator that gave no verdict did not run, never 0%", () => {
    const steps = [{ key: "evaluator-broken", type: "annotation" as const, origin: "auto" as const, references: { evaluator: { id: "e3", slug: "broken" } } }];
    const evs = [{ id: "e3", slug: "broken", name: "Broken pattern" }];
    // An erroring evaluator records false with its error (the runtime's shape).
    const errored = { id: "m", run_id: "r", data: { "evaluator-broken": {
      "attributes.ag.data.outputs.success": { type: "binary", freq: [{ value: false, count: 3, density: 1 }] },
      "attributes.ag.metrics.errors.cumulative": { type: "numeric/continuous", count: 3, sum: 3, mean: 1 },
    } } };
    expect(headlines(errored, steps, evs).map((h) => [h.label, h.value])).toEqual([["Broken pattern", "did not run"]]);
    const empty = { id: "m", run_id: "r", data: { "evaluator-broken": { "attributes.ag.data.outputs.success": { type: "binary", freq: [{ value: "", count: 3, density: 1 }] } } } };
    expect(headlines(empty, steps, evs).map((h) => [h.label, h.value])).toEqual([["Broken pattern", "did not run"]]);
    // One error in three: the rate is over the two verdicts.
    const some = { id: "m", run_id: "r", data: { "evaluator-broken": {
      "attributes.ag.data.outputs.success": { type: "binary", freq: [{ value: true, count: 1, density: 0.33 }, { value: false, count: 2, density: 0.67 }] },
      "attributes.ag.metrics.errors.cumulative": { type: "numeric/continuous", count: 3, sum: 1, mean: 0.33 },
    } } };
    expect(headlines(some, steps, evs).map((h) => [h.value, h.title])).toEqual([["50%", "success: 1 of 2 passed; 1 did not run"]]);
  });
});
