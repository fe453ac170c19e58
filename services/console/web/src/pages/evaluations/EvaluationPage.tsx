// /console/evaluations/:id — a run's live progress (polled) and its results:
// one row per testcase, in the testset's order, with the testset's columns,
// the application's output beside the expected answer, and per evaluator
// (by name) its verdict or its error, each cell one click from its trace;
// the charts beside the table, the filter by score and the export. The
// table is virtualised and read in one export call, so a run of thousands
// of scenarios opens as fast as a small one; the outputs are read from the
// traces of the rows in view only, a chunk of rows per call.
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { keepPreviousData, useQueries, useQuery } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import { Link, useParams } from "react-router";
import {
  exportURL,
  streamExport,
  type ExportDoc,
  getRun,
  globalMetrics,
  normTraceId,
  pauseOf,
  progress,
  stopReason,
  testcases,
  traceOutputs,
  type MetricRecord,
  type Progress,
  type Step,
  type TraceSummary,
} from "../../api/evaluations";
import { listEvaluators, type Evaluator } from "../../api/evaluators";
import { listApps } from "../../api/apps";
import { getRevision } from "../../api/testsets";
import { ErrorBox } from "../../components/ErrorBox";
import {
  EXPECTED_COLUMNS,
  buildResults,
  filterByScore,
  inTestcaseOrder,
  stepLabel,
  testsetColumns,
  verdictFromScores,
  verdictOf,
  type ResultModel,
  type ResultRow,
  type ScoreFilter,
  type ScoreOp,
  type Verdict,
} from "./results";
import { Histogram, PassRate, errorCount, fmt } from "./Chart";
import { usd } from "../../lib/usd";
import { LivePanel } from "./OnlineEvaluation";

const TERMINAL = new Set(["success", "failure", "errors", "cancelled"]);
/** ROW_HEIGHT is a results row's fixed height (px): cells are one line,
 * the rest of a long value on hover. */
const ROW_HEIGHT = 34;
/** CHUNK is the rows whose traces are read in one call. */
const CHUNK = 50;

/** Names are what the page calls steps and testcases by. */
export interface Names {
  /** label names a step key: the evaluator's or application's name. */
  label: (stepKey: string) => string;
  /** testcases by id, and the testset's order of them. */
  testcases?: Map<string, Record<string, unknown>>;
  order?: string[];
  /** expected is the testset column holding the expected answer. */
  expected?: string;
  /** metric types by export column ("<step>/<path>" → "binary", …). */
  types?: Record<string, string | undefined>;
}

export default function EvaluationPage() {
  const { id = "" } = useParams();
  // A live run is read again every few seconds: its meta.pause comes and
  // goes (its daily budget reached, then the next day) with no change of
  // status the progress would show.
  const run = useQuery({ queryKey: ["run", id], queryFn: () => getRun(id), refetchInterval: (q) => (q.state.data?.flags?.is_live ? 5000 : false) });
  const prog = useQuery({
    queryKey: ["run-progress", id],
    queryFn: () => progress(id),
    refetchInterval: (q) => (q.state.data && TERMINAL.has(q.state.data.status) ? false : 1000),
  });
  const done = !!prog.data && TERMINAL.has(prog.data.status);
  const live = !!run.data?.flags?.is_live;
  // The results are read at once, beside the progress (not after it: on
  // a large run the export is the longest read), then again as the run
  // advances, in steps of 5% of its cells and once at the end, not on
  // every poll.
  const step = prog.data ? Math.floor((20 * (prog.data.results.success ?? 0)) / Math.max(1, prog.data.results.expected)) : 0;
  // A live run never ends and its scenarios keep coming: read again as
  // each trace is scored.
  // A finished run's metrics are read once it ends. A live run's are
  // recomputed as each window of traces is scored (the runtime refreshes
  // the run's metrics when it settles a window): read them while it is
  // live, again as its scored count moves, and every few seconds besides
  // (the record is written a moment after the window's results).
  const scored = prog.data?.scenarios.success ?? 0;
  const metrics = useQuery({
    queryKey: ["run-metrics", id, done, live && !done ? scored : -1],
    queryFn: () => globalMetrics(id),
    enabled: done || live,
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (done && !q.state.data ? 2000 : live && !done ? 5000 : false),
  });
  // A run stopped by its budget or by hand is done before its metrics are
  // stored: the export is read again once they are (its score columns are
  // the per-scenario metrics, written with the global record).
  const computed = metrics.data ? (metrics.data.updated_at ?? metrics.data.created_at ?? "yes") : "no";
  const gen = prog.data ? (done ? `done-${computed}` : live ? `live-${prog.data.scenarios.total}-${prog.data.results.success ?? 0}` : String(step)) : "";
  const doc = useExport(id, gen);
  const steps = useMemo(() => run.data?.data?.steps ?? [], [run.data]);
  const evaluators = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const apps = useQuery({ queryKey: ["apps"], queryFn: listApps });
  // The testset's revision gives the testcases (inputs, expected answer)
  // and their order in one call.
  const revId = steps.find((s) => s.type === "input")?.references?.testset_revision?.id;
  const revision = useQuery({ queryKey: ["testset-revision", revId], queryFn: () => getRevision(revId!), enabled: !!revId, staleTime: Infinity });
  const model = useMemo(() => (doc.data ? buildResults(doc.data, steps) : null), [doc.data, doc.rows, steps]);
  // A run without a testset revision reference: its testcases by id.
  const tcIds = useMemo(() => (revId || !model ? [] : [...new Set(model.rows.map((r) => r.testcaseId).filter(Boolean) as string[])]), [revId, model]);
  const byIds = useQuery({ queryKey: ["testcases", tcIds], queryFn: () => testcasesInBatches(tcIds), enabled: tcIds.length > 0, staleTime: Infinity });

  const names = useMemo<Names>(() => {
    const evById = new Map((evaluators.data ?? []).map((e) => [e.id, e]));
    const evBySlug = new Map((evaluators.data ?? []).map((e) => [e.slug, e]));
    const appById = new Map((apps.data ?? []).map((a) => [a.id, a]));
    const label = (key: string) => {
      const s = steps.find((x) => x.key === key);
      const r = s?.references ?? {};
      const ev = (r.evaluator?.id && evById.get(r.evaluator.id)) || (r.evaluator?.slug && evBySlug.get(r.evaluator.slug)) || (!s ? evBySlug.get(stepLabel(key, steps)) : undefined);
      if (ev) return ev.name || ev.slug;
      const app = r.application?.id ? appById.get(r.application.id) : undefined;
      if (app) return (app.name || app.slug) + (r.application_revision?.version ? ` v${r.application_revision.version}` : "");
      // A query step's cells are the traces it found (an online
      // evaluation's production calls), not a name of ours.
      if (r.query || r.query_revision) return "trace output";
      return stepLabel(key, steps);
    };
    const tcs = revision.data?.data?.testcases ?? byIds.data ?? [];
    const tcMap = new Map(tcs.map((t) => [t.id, t.data as Record<string, unknown>]));
    const columns = testsetColumns(tcs.map((t) => t.data as Record<string, unknown>));
    const expected = expectedColumn(columns, steps, evById);
    const types: Record<string, string | undefined> = {};
    for (const [stepKey, paths] of Object.entries(metrics.data?.data ?? {})) for (const [path, s] of Object.entries(paths)) types[`${stepKey}/${path}`] = s.type;
    return { label, testcases: tcMap, order: revision.data?.data?.testcases?.map((t) => t.id) ?? revision.data?.data?.testcase_ids, expected, types };
  }, [steps, evaluators.data, apps.data, revision.data, byIds.data, metrics.data]);

  return (
    <div>
      <h1>{run.data?.name || "Evaluation"}</h1>
      <ErrorBox error={run.error || prog.error || (doc.error as Error | undefined)} />
      {run.data && live && <LivePanel run={run.data} progress={prog.data} />}
      {prog.data && !live && <ProgressBar p={prog.data} />}
      {stopReason(run.data) && (
        <p data-testid="stop-reason" role="status" className="status-cancelled">
          Stopped: {stopReason(run.data)}
        </p>
      )}
      {metrics.data && <ModelCalls m={metrics.data} />}
      <p>
        Export: <a href={exportURL(id, "csv")}>CSV</a> · <a href={exportURL(id, "json")}>JSON</a> ·{" "}
        <Link to={`/evaluations/compare?runs=${id}`}>compare…</Link>
      </p>
      <div className="results-layout">
        <div className="results-main">{model && <Results model={model} names={names} reading={!doc.complete} />}</div>
        <aside className="results-charts" aria-label="charts">
          <h2>Charts</h2>
          {!done && !live && <p>Charts appear when the run is over.</p>}
          {live && !done && <SoFar started={run.data?.created_at} computed={metrics.data?.updated_at ?? metrics.data?.created_at} any={!!metrics.data} paused={!!pauseOf(run.data)} />}
          {metrics.data && <Charts m={metrics.data} steps={steps} label={names.label} width={300} compact />}
          {done && !metrics.data && !metrics.isLoading && <p>No metrics recorded yet.</p>}
        </aside>
      </div>
    </div>
  );
}

/** SoFar says what a live run's charts cover: the traces scored from its
 * start to when its metrics were last computed, not a final figure; a
 * paused run's charts do not move until it resumes. */
function SoFar({ started, computed, any, paused }: { started?: string; computed?: string; any: boolean; paused: boolean }) {
  const at = (s?: string) => (s ? new Date(s).toLocaleString() : "");
  // The end of the window on the day it started reads as a time only.
  const until = (s: string) => (started && new Date(s).toDateString() === new Date(started).toDateString() ? new Date(s).toLocaleTimeString() : at(s));
  if (!any) return <p data-testid="charts-so-far">No trace scored yet: the charts appear after the first window of traces is scored, and grow with each one.</p>;
  return (
    <p data-testid="charts-so-far">
      <strong>So far</strong>: the traces scored {started ? `from ${at(started)} ` : ""}
      {computed ? `to ${until(computed)}` : "until now"}.{" "}
      {paused ? "The evaluation is paused: the charts stay as they are until scoring resumes." : "The evaluation is live: the charts refresh as each window of traces is scored."}
    </p>
  );
}

/** useExport streams the run's export (streamExport), showing the rows
 * as they come on the first read; a re-read (gen changed: the run
 * advanced) keeps the rows shown until it is complete. */
function useExport(id: string, gen: string) {
  const [state, setState] = useState<{ data?: ExportDoc; rows: number; complete: boolean; error?: unknown }>({ rows: 0, complete: false });
  // The first read starts with the page; the first progress read goes
  // with it, so a later gen only starts a re-read.
  const [reads, setReads] = useState(0);
  const readFor = useRef("");
  useEffect(() => {
    if (!gen || readFor.current === gen) return;
    if (readFor.current !== "") setReads((n) => n + 1);
    readFor.current = gen;
  }, [gen]);
  useEffect(() => {
    const ac = new AbortController();
    let last = 0;
    streamExport(
      id,
      (doc, complete) => {
        const now = performance.now();
        // Partial rows on the first read only: the first page at once,
        // then at most every second (each update rebuilds the table's
        // model, which on a large run is work the stream waits for).
        if (!complete && (reads > 0 || now - last < 1000)) return;
        last = now;
        setState({ data: doc, rows: doc.rows.length, complete });
      },
      ac.signal,
    ).catch((e: unknown) => {
      if (!ac.signal.aborted) setState((s) => ({ ...s, error: e }));
    });
    return () => ac.abort();
  }, [id, reads]);
  return state;
}

/** expectedColumn is the column an evaluator of the run reads the
 * correct answer from (its correct_answer_key), else a usual name. */
function expectedColumn(columns: string[], steps: Step[], evById: Map<string, Evaluator>): string | undefined {
  for (const s of steps) {
    const ev = s.references?.evaluator?.id ? evById.get(s.references.evaluator.id) : undefined;
    const k = ev?.data?.parameters?.correct_answer_key;
    if (typeof k === "string") {
      const col = k.replace(/^testcase\./, "");
      if (columns.includes(col)) return col;
    }
  }
  return EXPECTED_COLUMNS.find((c) => columns.includes(c));
}

async function testcasesInBatches(ids: string[]) {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += 200) batches.push(ids.slice(i, i + 200));
  return (await Promise.all(batches.map(testcases))).flat();
}

/** BAR colours the progress bar by the run's status: a run whose
 * scenarios errored is not drawn in success's green. */
const BAR: Record<string, string> = { failure: "#c33", errors: "#d98a00", cancelled: "#999" };

/** scenariosFinished counts the scenarios that ran to their end, with
 * errors or not (a scenario that errored is finished, not still to do);
 * a cancelled one never finished, and the bar says so apart. */
function scenariosFinished(p: Progress): number {
  return (p.scenarios.success ?? 0) + (p.scenarios.errors ?? 0) + (p.scenarios.failure ?? 0);
}

export function ProgressBar({ p }: { p: Progress }) {
  const expected = p.results.expected || 0;
  const ran = (p.results.success ?? 0) + (p.results.failure ?? 0) + (p.results.errors ?? 0);
  const cancelled = p.results.cancelled ?? 0;
  // The bar fills with what is over, cancelled cells included (a
  // cancelled run's bar is full and grey).
  const rate = expected ? Math.min(1, (ran + cancelled) / expected) : 0;
  return (
    <div data-testid="progress">
      <p>
        Status <strong className={`status-${p.status}`} data-testid="run-status">{p.status}</strong> · scenarios {scenariosFinished(p)}/{p.scenarios.total} finished
        {p.scenarios.errors ? `, ${p.scenarios.errors} with errors` : ""}
        {p.scenarios.cancelled ? `, ${p.scenarios.cancelled} cancelled` : ""} · cells {ran}/{expected}
        {cancelled ? `, ${cancelled} cancelled` : ""}
      </p>
      <div style={{ width: 480, height: 10, background: "#eee" }} role="progressbar" aria-valuenow={Math.round(rate * 100)} aria-valuemin={0} aria-valuemax={100}>
        <div data-testid="progress-fill" style={{ width: `${rate * 100}%`, height: "100%", background: BAR[p.status] ?? "#4a4" }} />
      </div>
      {p.waiting && p.waiting.length > 0 && (
        <p data-testid="rate-limit-wait" role="status">
          Waiting on the rate limit of {p.waiting.map((w) => w.provider).join(", ")}: the cells are queued and go on when the provider accepts calls again (they do not fail).
        </p>
      )}
    </div>
  );
}

/** ModelCalls says what the run's model calls were: made to a provider,
 * or answered from the project's model-call cache, and what that saved. */
export function ModelCalls({ m }: { m: MetricRecord }) {
  const mc = (m.data as Record<string, Record<string, { count?: number; sum?: number }>> | undefined)?.model_calls;
  if (!mc) return null;
  const made = mc.made?.count ?? 0;
  const cached = mc.cached?.count ?? 0;
  const saved = mc.cost_saved?.sum ?? 0;
  return (
    <p data-testid="model-calls">
      Model calls: {made} made, {cached} answered from the cache
      {cached > 0 && saved > 0 ? ` (saved $${saved < 0.01 ? saved.toPrecision(2) : saved.toFixed(2)})` : ""}.
    </p>
  );
}

/** APP_METRICS are the application's per-scenario metrics shown as columns. */
const APP_METRICS: Record<string, string> = {
  "attributes.ag.metrics.duration.cumulative": "latency (ms)",
  "attributes.ag.metrics.costs.cumulative.total": "cost",
  "attributes.ag.metrics.tokens.cumulative.total": "tokens",
};

function text(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function Results({ model, names = { label: (k) => model.labels[k] ?? k }, reading }: { model: ResultModel; names?: Names; reading?: boolean }) {
  const [filter, setFilter] = useState<ScoreFilter>({ column: "", op: ">=", value: 1 });
  const ordered = useMemo(() => inTestcaseOrder(model.rows, names.order), [model.rows, names.order]);
  const rows = useMemo(() => filterByScore(ordered, filter.column ? filter : undefined), [ordered, filter]);
  const invocationKeys = model.cellKeys.filter((k) => k.startsWith("application-"));
  // Every other cell but the testset's (the input step) is an evaluator's.
  const evalKeys = model.cellKeys.filter((k) => !k.startsWith("application-") && !k.startsWith("testset-"));
  const columns = useMemo(() => testsetColumns([...(names.testcases?.values() ?? [])]), [names.testcases]);
  const inputCols = columns.filter((c) => c !== names.expected);
  // A query's traces (an online evaluation's) bring their own inputs.
  const queryKey = model.cellKeys.find((k) => k.startsWith("query-"));
  const appMetrics = model.scores.filter((s) => invocationKeys.some((k) => k.startsWith(s.step + "/")) && APP_METRICS[s.path]);
  const stepOf = (k: string) => k.replace(/\/\d+$/, "");

  const scroller = useRef<HTMLDivElement>(null);
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
    initialRect: { width: 1000, height: 600 },
  });
  const items = virt.getVirtualItems();
  const padTop = items.length ? items[0].start : 0;
  const padBottom = items.length ? virt.getTotalSize() - items[items.length - 1].end : 0;

  // The traces of the rows in view (and around them), a chunk per call:
  // the application's outputs and the evaluators' outputs.
  const chunks = useMemo(() => {
    const set = new Set(items.map((it) => Math.floor(it.index / CHUNK)));
    return [...set].sort((a, b) => a - b);
  }, [items]);
  const traceKeys = [...invocationKeys, ...evalKeys];
  const traces = useQueries({
    queries: chunks.map((c) => {
      const ids = [
        ...new Set(
          rows
            .slice(c * CHUNK, (c + 1) * CHUNK)
            .flatMap((r) => traceKeys.map((k) => r.cells[k]?.traceId))
            .filter(Boolean)
            .map((t) => normTraceId(t!)),
        ),
      ];
      return {
        queryKey: ["trace-outputs", ids],
        queryFn: () => traceOutputs(ids),
        enabled: ids.length > 0,
        staleTime: Infinity,
        // A cell's trace reaches the trace store a moment after its
        // result (tracing → stream → writer): read again until every one
        // is there, for a while.
        refetchInterval: (q: { state: { data?: Map<string, TraceSummary>; dataUpdateCount: number } }) =>
          q.state.data && q.state.data.size < ids.length && q.state.dataUpdateCount < 15 ? 2000 : false,
      };
    }),
    // One map of every chunk's traces.
    combine: (qs) => {
      const m = new Map<string, TraceSummary>();
      for (const q of qs) for (const [k, v] of q.data ?? []) m.set(k, v);
      return m;
    },
  });
  const traceOf = (traceId?: string) => (traceId ? traces.get(normTraceId(traceId)) : undefined);

  const setF = (f: ScoreFilter) => {
    setFilter(f);
    if (scroller.current) scroller.current.scrollTop = 0;
  };
  const ncols = 1 + inputCols.length + invocationKeys.length + (names.expected ? 1 : 0) + evalKeys.length + appMetrics.length;

  return (
    <section data-testid="results">
      <h2>Results</h2>
      <div style={{ display: "flex", gap: 6, alignItems: "center", marginBottom: 6, flexWrap: "wrap" }}>
        Filter by score{" "}
        <select value={filter.column} onChange={(e) => setF({ ...filter, column: e.currentTarget.value })} aria-label="score column">
          <option value="">(none)</option>
          {model.scores.map((s) => (
            <option key={s.key} value={s.key}>
              {names.label(s.step)} · {s.path.replace(/^attributes\.ag\.(data\.outputs\.|metrics\.)/, "")}
            </option>
          ))}
        </select>
        <select value={filter.op} onChange={(e) => setF({ ...filter, op: e.currentTarget.value as ScoreOp })} aria-label="score operator">
          {[">=", "<=", "=", ">", "<", "missing"].map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        {filter.op !== "missing" && (
          <input type="number" step="any" value={filter.value} onChange={(e) => setF({ ...filter, value: Number(e.currentTarget.value) })} aria-label="score value" style={{ width: 80 }} />
        )}
        <span data-testid="results-count">
          {rows.length} of {model.rows.length} scenarios
        </span>
        {reading && <span className="muted">(reading the rest…)</span>}
      </div>
      <div className="results-scroll" ref={scroller} data-testid="results-scroll">
        <table className="results">
          <thead>
            <tr>
              <th>#</th>
              {inputCols.length === 0 && <th>{queryKey ? "trace inputs" : "inputs"}</th>}
              {inputCols.map((c) => (
                <th key={c} className="input-col">
                  {c}
                </th>
              ))}
              {invocationKeys.map((k, i) => (
                <Th key={k} k={k} names={names} suffix="output" extra={i === 0 && names.expected ? <th className="expected-col">{names.expected}</th> : null} />
              ))}
              {invocationKeys.length === 0 && names.expected && <th className="expected-col">{names.expected}</th>}
              {evalKeys.map((k) => (
                <Th key={k} k={k} names={names} />
              ))}
              {appMetrics.map((s) => (
                <th key={s.key} className="num">{APP_METRICS[s.path]}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {padTop > 0 && (
              <tr aria-hidden style={{ height: padTop }}>
                <td colSpan={ncols} />
              </tr>
            )}
            {items.map((it) => {
              const r = rows[it.index];
              const tc = r.testcaseId ? names.testcases?.get(r.testcaseId) : undefined;
              return (
                <tr key={r.scenarioId} data-testid="result-row" className={`status-${r.status}`} style={{ height: ROW_HEIGHT }}>
                  <td>{it.index + 1}</td>
                  {inputCols.length === 0 &&
                    (queryKey ? <Clip value={text(traceOf(r.cells[queryKey]?.traceId)?.inputs)} /> : <td>{r.testcaseId ? "…" : ""}</td>)}
                  {inputCols.map((c) => (
                    <Clip key={c} value={text(tc?.[c])} />
                  ))}
                  {invocationKeys.map((k, i) => {
                    const c = r.cells[k];
                    const out = traceOf(c?.traceId)?.outputs;
                    const err = c?.error;
                    return (
                      <FragmentCells key={k}>
                        <td className={err ? "cell-error" : undefined} title={err ?? (out !== undefined ? text(out) : undefined)}>
                          <div className="clip">
                            {err ? <span data-testid="cell-error">{err}</span> : out !== undefined ? text(out) : <span className="muted">{c?.status === "success" ? "…" : c?.status ?? ""}</span>}
                          </div>
                          <TraceLink id={c?.traceId} />
                        </td>
                        {i === 0 && names.expected && <Clip value={text(tc?.[names.expected])} className="expected-col" />}
                      </FragmentCells>
                    );
                  })}
                  {invocationKeys.length === 0 && names.expected && <Clip value={text(tc?.[names.expected])} className="expected-col" />}
                  {evalKeys.map((k) => {
                    const c = r.cells[k];
                    return <EvalCell key={k} row={r} cellKey={k} step={stepOf(k)} model={model} names={names} outputs={traceOf(c?.traceId)?.outputs} />;
                  })}
                  {appMetrics.map((s) => (
                    <td key={s.key} className="num">
                      {r.scores[s.key] !== undefined ? (isCostPath(s.path) ? usd(r.scores[s.key]) : fmt(r.scores[s.key])) : "—"}
                    </td>
                  ))}
                </tr>
              );
            })}
            {padBottom > 0 && (
              <tr aria-hidden style={{ height: padBottom }}>
                <td colSpan={ncols} />
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function FragmentCells({ children }: { children: ReactNode }) {
  return <>{children}</>;
}

function Th({ k, names, suffix, extra }: { k: string; names: Names; suffix?: string; extra?: ReactNode }) {
  const step = k.replace(/\/\d+$/, "");
  const repeat = k.slice(k.lastIndexOf("/") + 1);
  return (
    <>
      <th title={step}>
        {names.label(step)}
        {repeat === "0" ? "" : ` #${repeat}`}
        {suffix ? ` ${suffix}` : ""}
      </th>
      {extra}
    </>
  );
}

function Clip({ value, className }: { value: string; className?: string }) {
  return (
    <td className={className} title={value.length > 30 ? value : undefined}>
      <div className="clip">{value}</div>
    </td>
  );
}

function TraceLink({ id }: { id?: string }) {
  if (!id) return null;
  return (
    <Link to={`/traces/${normTraceId(id)}`} title="trace" className="trace-link">
      ↗
    </Link>
  );
}

/** EvalCell is an evaluator's cell: its verdict (from its trace's
 * outputs, else from the export's metric values), its error when its
 * execution failed, else its pending status. */
function EvalCell({ row, cellKey, step, model, names, outputs }: { row: ResultRow; cellKey: string; step: string; model: ResultModel; names: Names; outputs: unknown }) {
  const c = row.cells[cellKey];
  const v: Verdict | undefined = c?.error ? undefined : (verdictOf(outputs) ?? verdictFromScores(row, step, model.scores, names.types ?? {}));
  let body: ReactNode;
  let title: string | undefined;
  if (c?.error) {
    body = <span data-testid="cell-error">{c.error}</span>;
    title = c.error;
  } else if (v) {
    body = (
      <span data-testid="verdict" className={`verdict verdict-${v.kind}`}>
        {v.text}
        {v.others.length > 0 && <span className="muted"> +{v.others.length}</span>}
      </span>
    );
    title = [`${names.label(step)}: ${v.text}`, ...v.others.map(([k, x]) => `${k}: ${x}`)].join("\n");
  } else {
    // No verdict yet: the cell's state (pending, running) or, for a
    // finished cell whose outputs are being read, an ellipsis.
    body = <span className="muted">{!c?.status || c.status === "success" ? "…" : c.status}</span>;
  }
  return (
    <td className={c?.error ? "cell-error" : undefined} title={title}>
      <div className="clip">{body}</div>
      <TraceLink id={c?.traceId} />
    </td>
  );
}

/** isCostPath tells a metric in dollars: the costs an application's
 * traces add up, read as "$0.0000015", not "1.50e-6". */
const isCostPath = (path: string) => path.startsWith("attributes.ag.metrics.costs.");

const DEFAULTS: Record<string, string> = {
  "attributes.ag.metrics.duration.cumulative": "latency (ms)",
  "attributes.ag.metrics.costs.cumulative.total": "cost",
  "attributes.ag.metrics.tokens.cumulative.total": "tokens",
  "attributes.ag.metrics.errors.cumulative": "errors",
};

export function Charts({ m, steps: runSteps, label, width, compact }: { m: MetricRecord; steps?: Step[]; label?: (step: string) => string; width?: number; compact?: boolean }) {
  const steps = Object.entries(m.data ?? {});
  return (
    <div data-testid="charts">
      {steps.map(([step, paths]) => {
        const evaluator = step.startsWith("evaluator-");
        // An evaluator's outputs (its latency too, unless compact: beside
        // the table only the verdicts); the application's latency, cost
        // and tokens.
        const items = Object.entries(paths).filter(
          ([path, s]) => (evaluator ? !DEFAULTS[path] || (!compact && path.includes("duration")) : DEFAULTS[path] && !path.includes("errors")) && (s.hist?.length || s.freq?.length),
        );
        if (items.length === 0) {
          // An evaluator that errored in every scenario has no output to
          // chart: it did not run, which an empty space would hide.
          const errors = errorCount(paths);
          if (!evaluator || errors <= 0) return null;
          return (
            <section key={step}>
              <h3>{label ? label(step) : stepLabel(step, runSteps)}</h3>
              <p data-testid="chart">
                <span className="cell-error">did not run</span>: {Math.round(errors)} error{Math.round(errors) === 1 ? "" : "s"}
              </p>
            </section>
          );
        }
        return (
          <section key={step}>
            <h3>{label ? label(step) : stepLabel(step, runSteps)}</h3>
            <div style={{ display: "flex", flexWrap: "wrap", gap: 16 }}>
              {items.map(([path, s]) => {
                const title = DEFAULTS[path] ?? path.replace(/^attributes\.ag\.data\.outputs\./, "");
                return s.type === "binary" || (!s.hist?.length && s.freq?.length) ? (
                  <PassRate key={path} title={title} stats={s} errors={evaluator ? errorCount(paths) : 0} width={width} />
                ) : (
                  <Histogram key={path} title={title} stats={s} width={width} height={width ? 140 : undefined} format={isCostPath(path) ? usd : undefined} />
                );
              })}
            </div>
          </section>
        );
      })}
    </div>
  );
}
