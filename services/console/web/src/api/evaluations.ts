// Typed calls of the evaluation pages: evaluation records, simple evaluations
// and queues (docs/reference/registry.md).
import { json, raw, url } from "./call";
import type { Answer, Body, Has, Schemas } from "./schema";

export type Status = "pending" | "queued" | "running" | "success" | "failure" | "errors" | "cancelled";

/** Step is a run's step (EvalStep), its type and origin read as the
 * registry writes them. */
export type Step = Has<Schemas["EvalStep"], "key"> & {
  type: "input" | "invocation" | "annotation";
  origin: "custom" | "human" | "auto";
};

/** Run is an evaluation run (EvalRun); its meta is read as an object
 * (stopReason). */
export type Run = Has<Omit<Schemas["EvalRun"], "data">, "id"> & {
  status: Status;
  meta?: Record<string, unknown>;
  data?: Omit<Schemas["EvalRunData"], "steps"> & { steps?: Step[] };
};

/** stopReason is why the platform stopped a run (meta.stop.message: its
 * budget reached), or undefined. */
export function stopReason(r: Run | undefined): string | undefined {
  const stop = r?.meta?.stop as { message?: unknown } | undefined;
  return typeof stop?.message === "string" ? stop.message : undefined;
}

/** Pause is why a live run scores nothing for now though it is live
 * (meta.pause: its daily budget reached) and when it resumes by itself. */
export interface Pause {
  message: string;
  /** resumesAt is when scoring resumes (ISO), if the pause says. */
  resumesAt?: string;
}

/** pauseOf reads a live run's meta.pause, which the workers set when the
 * day's spend reaches data.budget and clear when the next day's first
 * window is scored (services/runtime/internal/evalrun/dailybudget.go). A
 * stopped run is not paused: stopping says more. */
export function pauseOf(r: Run | undefined): Pause | undefined {
  if (!r?.flags?.is_live || !r.flags.is_active) return undefined;
  const p = r.meta?.pause as { message?: unknown; resumes_at?: unknown } | undefined;
  if (typeof p?.message !== "string") return undefined;
  return { message: p.message, resumesAt: typeof p.resumes_at === "string" ? p.resumes_at : undefined };
}

/** Counts are the scenarios or cells of a run by status, read by any
 * status name (EvalProgressCounts has a field per status). */
export type Counts = Schemas["EvalProgressCounts"] & { total: number; [status: string]: number };

/** Progress is a run's progress (EvalProgress); waiting lists the
 * provider rate limits the run's cells are queued behind now. */
export type Progress = Has<Omit<Schemas["EvalProgress"], "waiting">, "run_id"> & {
  status: Status;
  scenarios: Counts;
  results: Counts & { expected: number };
  waiting?: Required<Schemas["ProviderWait"]>[];
};

export async function listRuns(): Promise<Run[]> {
  return (await json<{ runs?: Run[] }>("POST", "/api/evaluations/runs/query", { windowing: { limit: 200 } })).runs ?? [];
}

export async function getRun(id: string): Promise<Run | undefined> {
  return (await json<{ run?: Run }>("GET", `/api/evaluations/runs/${id}`)).run;
}

export async function progress(id: string): Promise<Progress | undefined> {
  return (await json<{ progress?: Progress }>("GET", `/api/evaluations/runs/${id}/progress`)).progress;
}

export interface NewEvaluation {
  name: string;
  testsetRevisionId: string;
  applicationRevisionIds: string[];
  evaluatorRevisionIds: string[];
  repeats?: number;
  /** Most each run's model calls may cost, USD. */
  budget?: number;
}

/** Estimate is the registry's cost estimate of a run before it starts
 * (POST /api/simple/evaluations/estimate), every field answered:
 * assumptions state the formula. */
export type Estimate = Required<Schemas["Estimate"]>;

/** runData is a simple evaluation's data; the testset step is custom, as
 * the registry reads a list of ids there. */
function runData(e: NewEvaluation, app: string | undefined): Schemas["SimpleData"] {
  const data: Schemas["SimpleData"] = {
    testset_steps: { [e.testsetRevisionId]: "custom" },
    evaluator_steps: Object.fromEntries(e.evaluatorRevisionIds.map((id) => [id, "auto"])),
  };
  if (app) data.application_steps = { [app]: "auto" };
  if (e.repeats && e.repeats > 1) data.repeats = e.repeats;
  if (e.budget && e.budget > 0) data.budget = e.budget;
  return data;
}

/** estimateEvaluation is the estimate of each run createEvaluation would
 * start (one per application revision), nothing created. */
export async function estimateEvaluation(e: NewEvaluation): Promise<Estimate[]> {
  const apps = e.applicationRevisionIds.length ? e.applicationRevisionIds : [undefined];
  return Promise.all(
    apps.map(async (app) => {
      const body: Body<"postSimpleEvaluationsEstimate"> = { evaluation: { data: runData(e, app) } };
      return (await json<{ estimate: Estimate }>("POST", "/api/simple/evaluations/estimate", body)).estimate;
    }),
  );
}

/** createEvaluation starts one run per application revision (a run has at
 * most one application, as on the compatible platform), every evaluator auto. */
export async function createEvaluation(e: NewEvaluation): Promise<Run[]> {
  const apps = e.applicationRevisionIds.length ? e.applicationRevisionIds : [undefined];
  const out: Run[] = [];
  for (const app of apps) {
    const data = runData(e, app);
    const name = apps.length > 1 ? `${e.name} #${out.length + 1}` : e.name;
    const body: Body<"postSimpleEvaluations"> = { evaluation: { name, data } };
    const r = await json<Answer<"postSimpleEvaluations">>("POST", "/api/simple/evaluations/", body);
    if (!r.evaluation?.id) throw new Error("the registry made no evaluation");
    out.push({ id: r.evaluation.id, name: r.evaluation.name ?? name, status: (r.evaluation.data?.status as Status | undefined) ?? "pending" });
  }
  return out;
}

export interface MetricStats {
  type?: string;
  count?: number;
  mean?: number;
  min?: number;
  max?: number;
  sum?: number;
  hist?: { bin: number; edge: [number, number]; count: number }[];
  freq?: { value: unknown; count: number; density: number }[];
  pcts?: Record<string, number>;
}

/** MetricRecord is a run's metric record (Metric), its data read as
 * {step: {path: stats}}; created_at is when it was computed (a live
 * run's is recomputed as each window of traces is scored). */
export type MetricRecord = Has<Schemas["Metric"], "id" | "run_id"> & {
  status?: Status;
  data?: Record<string, Record<string, MetricStats>>;
};

/** globalMetrics is the run's global metric record: {step: {path: stats}}. */
export async function globalMetrics(runId: string): Promise<MetricRecord | undefined> {
  // Only the run-level record (no scenario, no timestamp): a large run
  // has a record per scenario besides.
  const r = await json<{ metrics?: MetricRecord[] }>("POST", "/api/evaluations/metrics/query", {
    metric: { run_id: runId, scenario_ids: false, timestamps: false },
  });
  return (r.metrics ?? []).find((m) => !m.scenario_id && !m.timestamp);
}

/** ExportRow is a row of the run's JSON export: scenario_id, status,
 * testcase_id, "<step>/<repeat>/{status,trace_id,error}" and
 * "<step>/<metric path>" values. */
export type ExportRow = Record<string, unknown> & { scenario_id: string; status: Status; testcase_id?: string };

export interface ExportDoc {
  run_id: string;
  columns: string[];
  rows: ExportRow[];
}

export async function exportJSON(runId: string): Promise<ExportDoc> {
  return json<ExportDoc>("GET", `/api/evaluations/runs/${runId}/export?format=json`);
}

/** streamExport reads the run's JSON export as it streams: the registry
 * writes the header on the first line and a row per line, a page of
 * scenarios at a time, so the first rows are shown long before a large
 * run's last one is read. onRows gets the rows read so far (the same
 * growing array) and whether the document is complete. */
export async function streamExport(runId: string, onRows: (doc: ExportDoc, complete: boolean) => void, signal?: AbortSignal): Promise<ExportDoc> {
  const res = await raw(`/api/evaluations/runs/${runId}/export?format=json`, { signal });
  const doc: ExportDoc = { run_id: runId, columns: [], rows: [] };
  if (!res.body) {
    const all = (await res.json()) as ExportDoc;
    onRows(all, true);
    return all;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let header = false;
  const line = (l: string) => {
    const t = l.trim();
    if (!t) return;
    if (!header) {
      // {"run_id":…,"columns":[…],"rows":[
      const h = JSON.parse(t + "]}") as ExportDoc;
      doc.run_id = h.run_id;
      doc.columns = h.columns;
      header = true;
      return;
    }
    if (t.startsWith("]")) return; // ],"count":N}
    doc.rows.push(JSON.parse(t.endsWith(",") ? t.slice(0, -1) : t) as ExportRow);
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buf += value;
    const lines = buf.split("\n");
    buf = done ? "" : lines.pop()!;
    for (const l of lines) line(l);
    if (done) break;
    if (header) onRows(doc, false);
  }
  if (!header) throw new Error("the export ended before its header");
  onRows(doc, true);
  return doc;
}

/** exportURL is the streamed export as a download link (a GET: the
 * session cookie is enough, no CSRF token). */
export function exportURL(runId: string, format: "csv" | "json"): string {
  return url(`/api/evaluations/runs/${runId}/export?format=${format}`);
}

/** ComparedScenario is a testcase side by side (CompareScenario): one
 * entry per run, null where that run has no scenario for it. */
export type ComparedScenario = Omit<Schemas["CompareScenario"], "runs"> & {
  runs: ((Has<Schemas["ScenarioSide"], "scenario_id"> & { status: Status }) | null)[];
};

export type CompareInterval = Has<Schemas["Interval"], "low" | "high">;

/** CompareSide is one run's side of a compared metric (MetricSide). */
export type CompareSide = Has<Schemas["MetricSide"], "run_id" | "count"> & {
  ci?: CompareInterval;
  adjusted_ci?: CompareInterval;
  verdict?: "improved" | "regressed" | "inconclusive";
  power?: Has<Schemas["ComparePower"], "difference" | "detectable" | "alpha" | "power">;
};

/** Comparison is the compare route's answer (Comparison): statistics say
 * how the deltas were tested, costs are each run's traced cost (USD) in
 * the order of run_ids, a side's cost_per_point the run's cost ÷ the
 * score's mean. */
export type Comparison = Has<Omit<Schemas["Comparison"], "scenarios" | "metrics" | "costs">, "run_ids" | "testset_revision_id"> & {
  statistics?: Has<Schemas["CompareStatistics"], "unit" | "correction" | "tests" | "alpha" | "power">;
  scenarios?: ComparedScenario[];
  metrics: (Has<Omit<Schemas["CompareMetric"], "runs">, "step" | "kind" | "path" | "type"> & {
    direction?: "higher" | "lower";
    runs: CompareSide[];
  })[];
  costs?: Required<Schemas["RunCost"]>[];
};

export async function compare(runIds: string[]): Promise<Comparison> {
  const body: Body<"postEvaluationsRunsCompare"> = { run_ids: runIds };
  return (await json<{ comparison: Comparison }>("POST", "/api/evaluations/runs/compare", body)).comparison;
}

/** TestcaseRow is a testcase (Testcase) with its row. */
export type TestcaseRow = Has<Schemas["Testcase"], "id" | "data">;

export async function testcases(ids: string[]): Promise<TestcaseRow[]> {
  if (ids.length === 0) return [];
  return (await json<{ testcases?: TestcaseRow[] }>("GET", `/api/testcases/?testcase_ids=${ids.join(",")}`)).testcases ?? [];
}

export interface TraceSummary {
  trace_id: string;
  outputs?: unknown;
  inputs?: unknown;
}

/** traceOutputs reads the root span's inputs and outputs of each trace. */
export async function traceOutputs(traceIds: string[]): Promise<Map<string, TraceSummary>> {
  const out = new Map<string, TraceSummary>();
  if (traceIds.length === 0) return out;
  const r = await json<{ traces?: { trace_id: string; spans?: Record<string, unknown> }[] }>(
    "GET",
    `/api/traces/?trace_ids=${traceIds.join(",")}`,
  );
  for (const t of r.traces ?? []) {
    const id = normTraceId(t.trace_id);
    const roots = Object.values(t.spans ?? {});
    const root = (Array.isArray(roots[0]) ? roots[0][0] : roots[0]) as { attributes?: { ag?: { data?: { inputs?: unknown; outputs?: unknown } } } } | undefined;
    out.set(id, { trace_id: id, inputs: root?.attributes?.ag?.data?.inputs, outputs: root?.attributes?.ag?.data?.outputs });
  }
  return out;
}

/** normTraceId is a trace id as 32 lowercase hex digits, however written. */
export function normTraceId(id: string): string {
  return id.replace(/-/g, "").toLowerCase();
}

/** invocationTraces maps each scenario of the run to the trace of its
 * invocation step's first cell. */
export async function invocationTraces(runId: string, stepKey: string, scenarioIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (scenarioIds.length === 0) return out;
  const body: Body<"postEvaluationsResultsQuery"> = { result: { run_id: runId, scenario_ids: scenarioIds, step_keys: [stepKey] } };
  const r = await json<Answer<"postEvaluationsResultsQuery">>("POST", "/api/evaluations/results/query", body);
  for (const x of r.results ?? []) if (x.scenario_id && x.trace_id && !x.repeat_idx) out.set(x.scenario_id, normTraceId(x.trace_id));
  return out;
}

export interface NewOnlineEvaluation {
  name: string;
  /** filtering is the traces' filter; it must hold trace_type is
   * invocation at its top level (the registry refuses a live run that
   * could evaluate its own evaluator traces). */
  filtering: unknown;
  /** rate is the share of matching traces scored, 0 < rate ≤ 1. */
  rate: number;
  /** budget is the most a day's scoring may cost (USD), if any: once
   * reached, the run scores no trace until 00:00 UTC (data.budget). */
  budget?: number;
  evaluatorRevisionIds: string[];
}

/** createOnlineEvaluation saves the traces' query (simple queries: its
 * slug made from the name) and creates a live evaluation over it: every
 * window of new matching traces is scored by the evaluators (auto). */
export async function createOnlineEvaluation(e: NewOnlineEvaluation): Promise<Run> {
  const data: Record<string, unknown> = { filtering: e.filtering };
  if (e.rate < 1) data.windowing = { rate: e.rate };
  const query: Body<"postSimpleQueries"> = { query: { name: `${e.name} traces`, data } };
  const q = await json<Answer<"postSimpleQueries">>("POST", "/api/simple/queries/", query);
  if (!q.query?.revision_id) throw new Error("the registry saved no query");
  // The query step is custom, as the registry reads a list of ids there.
  const body: Body<"postSimpleEvaluations"> = {
    evaluation: {
      name: e.name,
      flags: { is_live: true },
      data: {
        query_steps: { [q.query.revision_id]: "custom" },
        evaluator_steps: Object.fromEntries(e.evaluatorRevisionIds.map((id) => [id, "auto"])),
        ...(e.budget !== undefined && { budget: e.budget }),
      },
    },
  };
  const r = await json<Answer<"postSimpleEvaluations">>("POST", "/api/simple/evaluations/", body);
  if (!r.evaluation?.id) throw new Error("the registry made no evaluation");
  return { id: r.evaluation.id, name: r.evaluation.name ?? e.name, status: (r.evaluation.data?.status as Status | undefined) ?? "running" };
}

/** stopEvaluation pauses a live evaluation (no more windows are scored);
 * startEvaluation resumes it. */
export async function stopEvaluation(id: string): Promise<void> {
  await json("POST", `/api/simple/evaluations/${id}/stop`);
}

export async function startEvaluation(id: string): Promise<void> {
  await json("POST", `/api/simple/evaluations/${id}/start`);
}

/** ScenarioHead is a run's scenario (Scenario). */
export type ScenarioHead = Has<Schemas["Scenario"], "id"> & { status?: Status };

/** lastScenario is the run's newest scenario (a live run's last trace). */
export async function lastScenario(runId: string): Promise<ScenarioHead | undefined> {
  const r = await json<{ scenarios?: ScenarioHead[] }>("POST", "/api/evaluations/scenarios/query", {
    scenario: { run_id: runId },
    windowing: { limit: 1, order: "descending" },
  });
  return r.scenarios?.[0];
}

/** QueryRevision is a saved query's revision (QueryRevision), its data
 * read as a filter and a sampling rate. */
export type QueryRevision = Has<Schemas["QueryRevision"], "id"> & {
  data?: { filtering?: { operator?: string; conditions?: unknown[] }; windowing?: { rate?: number } };
};

/** queryRevision reads a saved query's revision (an online evaluation's
 * filter and sampling rate). */
export async function queryRevision(id: string): Promise<QueryRevision | undefined> {
  return (await json<{ query_revision?: QueryRevision }>("GET", `/api/queries/revisions/${id}`)).query_revision;
}
