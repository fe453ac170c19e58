import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { ModelCalls, ProgressBar } from "./EvaluationPage";
import type { MetricRecord, Progress } from "../../api/evaluations";

afterEach(cleanup);

const running: Progress = { run_id: "r", status: "running", scenarios: { total: 4, success: 1 }, results: { total: 8, success: 4, running: 4, expected: 16 } };

describe("run progress", () => {
  it("says when the cells wait on a provider's rate limit", () => {
    render(<ProgressBar p={{ ...running, waiting: [{ provider: "openai", until: "2026-01-01T00:00:05Z" }] }} />);
    expect(screen.getByTestId("rate-limit-wait").textContent).toContain("Waiting on the rate limit of openai");
  });

  it("says nothing of a wait when there is none", () => {
    render(<ProgressBar p={{ ...running, waiting: [] }} />);
    expect(screen.queryByTestId("rate-limit-wait")).toBeNull();
  });

  it("counts the model calls made and answered from the cache", () => {
    const m = { id: "m", run_id: "r", data: { model_calls: { made: { type: "count", count: 2 }, cached: { type: "count", count: 998 }, cost_saved: { type: "cost", sum: 1.5 } } } } as unknown as MetricRecord;
    render(<ModelCalls m={m} />);
    expect(screen.getByTestId("model-calls").textContent).toBe("Model calls: 2 made, 998 answered from the cache (saved $1.50).");
  });
});
