import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { MemoryRouter } from "react-router";
import { buildResults, errorMessage, filterByScore, inTestcaseOrder, testsetColumns, verdictFromScores, verdictOf } from "./results";
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

describe("verdicts", () => {
  it("reads an evaluator's outputs as its verdict", () => {
    expect(verdictOf({ success: false })).toMatchObject({ text: "✗", kind: "fail", others: [] });
    expect(verdictOf({ score: 0.25, success: true })).toMatchObject({ text: "✓", kind: "pass", others: [["score", "0.25"]] });
    expect(verdictOf({ score: 3 })).toMatchObject({ text: "3", kind: "score" });
    expect(verdictOf({ label: "partially correct", reasoning: "…" })).toMatchObject({ text: "partially correct", kind: "label" });
    expect(verdictOf(true)).toMatchObject({ text: "✓" });
    expect(verdictOf(undefined)).toBeUndefined();
  });
  it("reads the export's metric values while the trace is not read", () => {
    const m = buildResults(doc);
    expect(verdictFromScores(m.rows[1], "evaluator-sim", m.scores, {})).toMatchObject({ text: "0.4", kind: "score", others: [] });
    expect(verdictFromScores(m.rows[1], "evaluator-exact", m.scores, {})).toMatchObject({ text: "✗", kind: "fail" });
    expect(verdictFromScores(m.rows[0], "evaluator-exact", m.scores, { [OK]: "binary" })).toMatchObject({ text: "✓", kind: "pass" });
    expect(verdictFromScores(m.rows[0], "evaluator-exact", m.scores, { [OK]: "numeric/continuous" })).toMatchObject({ text: "1", kind: "score" });
    expect(verdictFromScores(m.rows[2], "evaluator-sim", m.scores, {})).toBeUndefined();
  });
  it("names an error by its message", () => {
    expect(errorMessage({ message: "Invalid regular expression", code: 422 })).toBe("Invalid regular expression");
    expect(errorMessage({ code: 1 })).toBe('{"code":1}');
    expect(errorMessage(undefined)).toBeUndefined();
  });
  it("orders rows as the testset and lists its columns", () => {
    const m = buildResults(doc);
    expect(inTestcaseOrder(m.rows, ["t3", "t1"]).map((r) => r.scenarioId)).toEqual(["s3", "s1", "s2", "s4"]);
    expect(testsetColumns([{ country: "a", testcase_dedup_id: "x" }, { correct_answer: "b", __id__: 1 }])).toEqual(["country", "correct_answer"]);
  });
});

describe("results table", () => {
  // jsdom lays nothing out: give the virtualised table's box a height.
  const desc = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "clientHeight");
  beforeAll(() => Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 600 }));
  afterAll(() => desc && Object.defineProperty(HTMLElement.prototype, "clientHeight", desc));
  it("shows the testset's columns, the expected answer, verdicts and errors, and filters by score", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => {
        const body = {
          count: 2,
          traces: [
            { trace_id: "aaaa1", spans: { root: { attributes: { ag: { data: { outputs: "Paris" } } } } } },
            { trace_id: "aaaa2", spans: { root: { attributes: { ag: { data: { outputs: "Toronto" } } } } } },
          ],
        };
        return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
      }),
    );
    const tcs = new Map<string, Record<string, unknown>>([
      ["t1", { country: "France", correct_answer: "Paris" }],
      ["t2", { country: "Canada", correct_answer: "Ottawa" }],
      ["t3", { country: "Peru", correct_answer: "Lima" }],
      ["t4", { country: "Chile", correct_answer: "Santiago" }],
    ]);
    const names = { label: (k: string) => ({ "evaluator-sim": "Similarity", "application-app": "capitals v2" })[k] ?? k, testcases: tcs, order: ["t2", "t1", "t3", "t4"], expected: "correct_answer" };
    render(
      <QueryClientProvider client={new QueryClient()}>
        <MemoryRouter>
          <Results model={buildResults(doc)} names={names} />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    const headers = screen.getAllByRole("columnheader").map((h) => h.textContent);
    expect(headers).toEqual(["#", "country", "capitals v2 output", "correct_answer", "Similarity"]);
    const rows = () => screen.getAllByTestId("result-row");
    expect(rows()).toHaveLength(4);
    expect(await screen.findByText("Toronto")).toBeInTheDocument();
    const cells = (i: number) => [...rows()[i].querySelectorAll("td")].map((c) => c.textContent);
    // Canada first (the testset's order): Toronto beside Ottawa, its score.
    expect(cells(0)).toEqual(["1", "Canada", "Toronto↗", "Ottawa", "0.4"]);
    expect(cells(1)).toEqual(["2", "France", "Paris↗", "Paris", "0.9"]);
    expect(cells(2)[2]).toBe("boom");
    expect(within(rows()[1]).getByTitle("trace")).toHaveAttribute("href", "/traces/aaaa1");

    await userEvent.selectOptions(screen.getByLabelText("score column"), SCORE);
    await userEvent.clear(screen.getByLabelText("score value"));
    await userEvent.type(screen.getByLabelText("score value"), "0.5");
    expect(screen.getByTestId("results-count")).toHaveTextContent("2 of 4 scenarios");
    expect(rows().map((r) => r.textContent)).toEqual([expect.stringContaining("France"), expect.stringContaining("Chile")]);
    await userEvent.selectOptions(screen.getByLabelText("score operator"), "missing");
    expect(screen.getByTestId("results-count")).toHaveTextContent("1 of 4 scenarios");
    expect(rows()[0]).toHaveTextContent("boom");
  }, 30_000);
});
