import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { MemoryRouter } from "react-router";
import { buildResults, filterByScore } from "./results";
import { Results } from "./EvaluationPage";
import type { ExportDoc, Step } from "../../api/evaluations";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const SCORE = "evaluator-sim/attributes.ag.data.outputs.score";
const OK = "evaluator-exact/attributes.ag.data.outputs.success";
const doc: ExportDoc = {
  run_id: "r1",
  columns: [
    "scenario_id",
    "status",
    "testcase_id",
    "testset-abc/0/status",
    "testset-abc/0/trace_id",
    "testset-abc/0/error",
    "application-app/0/status",
    "application-app/0/trace_id",
    "application-app/0/error",
    "evaluator-sim/0/status",
    "evaluator-sim/0/trace_id",
    "evaluator-sim/0/error",
    SCORE,
    OK,
  ],
  rows: [
    { scenario_id: "s1", status: "success", testcase_id: "t1", "application-app/0/status": "success", "application-app/0/trace_id": "AAAA-1", [SCORE]: 0.9, [OK]: 1 },
    { scenario_id: "s2", status: "success", testcase_id: "t2", "application-app/0/status": "success", "application-app/0/trace_id": "aaaa2", [SCORE]: 0.4, [OK]: 0 },
    { scenario_id: "s3", status: "errors", testcase_id: "t3", "application-app/0/status": "failure", "application-app/0/error": "boom" },
    { scenario_id: "s4", status: "success", testcase_id: "t4", "application-app/0/status": "success", [SCORE]: 1, [OK]: 1 },
  ],
};

describe("results model", () => {
  const m = buildResults(doc);
  it("splits cells and scores", () => {
    expect(m.cellKeys).toEqual(["testset-abc/0", "application-app/0", "evaluator-sim/0"]);
    expect(m.scores.map((s) => s.key)).toEqual([SCORE, OK]);
    expect(m.scores[0]).toMatchObject({ step: "evaluator-sim", path: "attributes.ag.data.outputs.score", label: "sim · score" });
    expect(m.rows[2].cells["application-app/0"]).toEqual({ status: "failure", error: "boom", traceId: undefined });
  });

  it("filters by score", () => {
    const ids = (f: Parameters<typeof filterByScore>[1]) => filterByScore(m.rows, f).map((r) => r.scenarioId);
    expect(ids(undefined)).toEqual(["s1", "s2", "s3", "s4"]);
    expect(ids({ column: SCORE, op: ">=", value: 0.5 })).toEqual(["s1", "s4"]);
    expect(ids({ column: SCORE, op: "<", value: 0.5 })).toEqual(["s2"]);
    expect(ids({ column: SCORE, op: "=", value: 1 })).toEqual(["s4"]);
    expect(ids({ column: OK, op: "=", value: 0 })).toEqual(["s2"]);
    expect(ids({ column: SCORE, op: "missing", value: 0 })).toEqual(["s3"]);
  });
});

describe("annotations under undeclared step keys", () => {
  // The compatible web app links an annotation under
  // "<invocation step key>.<evaluator slug>", a key the run does not
  // declare; the export lists such cells after the declared ones.
  const K = "application-app.my-rubric";
  const Q = "application.v2.judge"; // not after an invocation step key: the last part
  const steps: Step[] = [
    { key: "testset-abc", type: "input", origin: "custom" },
    { key: "application-app", type: "invocation", origin: "custom" },
    { key: "evaluator-judge", type: "annotation", origin: "human", references: { evaluator: { slug: "judge" } } },
  ];
  const d: ExportDoc = {
    run_id: "r2",
    columns: ["scenario_id", "status", "testcase_id", "application-app/0/status", "application-app/0/trace_id", "application-app/0/error",
      `${K}/0/status`, `${K}/0/trace_id`, `${K}/0/error`, `${Q}/0/status`, `${Q}/0/trace_id`, `${Q}/0/error`,
      `${K}/attributes.ag.data.outputs.score`],
    rows: [{ scenario_id: "s1", status: "success", [`${K}/0/status`]: "success", [`${K}/0/trace_id`]: "bbbb", [`${K}/attributes.ag.data.outputs.score`]: 4 }],
  };
  it("gives each key a column named by its evaluator", () => {
    const m = buildResults(d, steps);
    expect(m.cellKeys).toEqual(["application-app/0", `${K}/0`, `${Q}/0`]);
    expect(m.labels[K]).toBe("my-rubric");
    expect(m.labels[Q]).toBe("judge");
    expect(m.labels["evaluator-judge"]).toBeUndefined();
    expect(m.scores[0]).toMatchObject({ step: K, path: "attributes.ag.data.outputs.score", label: "my-rubric · score" });
    expect(m.rows[0].cells[`${K}/0`]).toEqual({ status: "success", traceId: "bbbb", error: undefined });
    expect(m.rows[0].scores[`${K}/attributes.ag.data.outputs.score`]).toBe(4);
  });
});

describe("results table", () => {
  it("filters the rows by score and links each cell to its trace", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string) => {
        const body = url.startsWith("/api/testcases")
          ? { count: 1, testcases: [{ id: "t1", data: { country: "France", testcase_dedup_id: "x" } }] }
          : { count: 1, traces: [{ trace_id: "aaaa1", spans: { root: { attributes: { ag: { data: { outputs: "Paris" } } } } } }] };
        return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
      }),
    );
    render(
      <QueryClientProvider client={new QueryClient()}>
        <MemoryRouter>
          <Results model={buildResults(doc)} />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    expect(screen.getAllByTestId("result-row")).toHaveLength(4);
    expect(await screen.findByText("Paris")).toBeInTheDocument();
    expect(screen.getByText('{"country":"France"}')).toBeInTheDocument();
    const first = screen.getAllByTestId("result-row")[0];
    expect(within(first).getByTitle("trace")).toHaveAttribute("href", "/traces/aaaa1");

    await userEvent.selectOptions(screen.getByLabelText("score column"), SCORE);
    await userEvent.clear(screen.getByLabelText("score value"));
    await userEvent.type(screen.getByLabelText("score value"), "0.5");
    expect(screen.getByTestId("results-count")).toHaveTextContent("2 of 4 scenarios");
    expect(screen.getAllByTestId("result-row").map((r) => r.textContent)).toEqual([expect.stringContaining("0.9"), expect.stringContaining("1")]);
    await userEvent.selectOptions(screen.getByLabelText("score operator"), "missing");
    expect(screen.getByTestId("results-count")).toHaveTextContent("1 of 4 scenarios");
    expect(screen.getAllByTestId("result-row")[0]).toHaveTextContent("boom");
  }, 30_000);
});
