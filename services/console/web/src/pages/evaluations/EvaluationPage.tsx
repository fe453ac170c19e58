// /console/evaluations/:id — a run's live progress (polled), its results
// (scenarios × steps with inputs, outputs, scores and each cell's trace),
// filtered by score, charts per evaluator and for cost, tokens and
// latency, and the export.
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { exportJSON, exportURL, getRun, globalMetrics, normTraceId, progress, testcases, traceOutputs, type MetricRecord, type Progress, type Step } from "../../api/evaluations";
import { ErrorBox } from "../../components/ErrorBox";
import { buildResults, filterByScore, stepLabel, type ResultModel, type ScoreFilter, type ScoreOp } from "./results";
import { Histogram, PassRate, fmt } from "./Chart";

const TERMINAL = new Set(["success", "failure", "errors", "cancelled"]);
const PAGE = 50;

export default function EvaluationPage() {
  const { id = "" } = useParams();
  const run = useQuery({ queryKey: ["run", id], queryFn: () => getRun(id) });
  const prog = useQuery({
    queryKey: ["run-progress", id],
    queryFn: () => progress(id),
    refetchInterval: (q) => (q.state.data && TERMINAL.has(q.state.data.status) ? false : 1000),
  });
  const done = !!prog.data && TERMINAL.has(prog.data.status);
  // The results are re-read as the run advances, in steps of 5% of its
  // cells (and once at the end), not on every poll.
  const step = prog.data ? Math.floor((20 * (prog.data.results.success ?? 0)) / Math.max(1, prog.data.results.expected)) : 0;
  const doc = useQuery({ queryKey: ["run-export", id, step, done], queryFn: () => exportJSON(id), enabled: !!prog.data });
  const metrics = useQuery({ queryKey: ["run-metrics", id, done], queryFn: () => globalMetrics(id), enabled: done, refetchInterval: (q) => (done && !q.state.data ? 2000 : false) });
  const model = useMemo(() => (doc.data ? buildResults(doc.data, run.data?.data?.steps ?? []) : null), [doc.data, run.data]);

  return (
    <div>
      <h1>{run.data?.name || "Evaluation"}</h1>
      <ErrorBox error={run.error || prog.error || doc.error} />
      {prog.data && <ProgressBar p={prog.data} />}
      <p>
        Export: <a href={exportURL(id, "csv")}>CSV</a> · <a href={exportURL(id, "json")}>JSON</a> ·{" "}
        <Link to={`/evaluations/compare?runs=${id}`}>compare…</Link>
      </p>
      {model && <Results model={model} />}
      <h2>Charts</h2>
      {!done && <p>Charts appear when the run is over.</p>}
      {metrics.data && <Charts m={metrics.data} steps={run.data?.data?.steps} />}
      {done && !metrics.data && !metrics.isLoading && <p>No metrics recorded yet.</p>}
    </div>
  );
}

function ProgressBar({ p }: { p: Progress }) {
  const expected = p.results.expected || 0;
  const finished = (p.results.success ?? 0) + (p.results.failure ?? 0) + (p.results.errors ?? 0) + (p.results.cancelled ?? 0);
  const rate = expected ? Math.min(1, finished / expected) : 0;
  return (
    <div data-testid="progress">
      <p>
        Status <strong className={`status-${p.status}`} data-testid="run-status">{p.status}</strong> · scenarios {p.scenarios.success ?? 0}/{p.scenarios.total} done
        {p.scenarios.errors ? `, ${p.scenarios.errors} with errors` : ""} · cells {finished}/{expected}
      </p>
      <div style={{ width: 480, height: 10, background: "#eee" }} role="progressbar" aria-valuenow={Math.round(rate * 100)} aria-valuemin={0} aria-valuemax={100}>
        <div style={{ width: `${rate * 100}%`, height: "100%", background: p.status === "failure" ? "#c33" : "#4a4" }} />
      </div>
    </div>
  );
}

export function Results({ model }: { model: ResultModel }) {
  const [filter, setFilter] = useState<ScoreFilter>({ column: "", op: ">=", value: 1 });
  const [page, setPage] = useState(0);
  const rows = useMemo(() => filterByScore(model.rows, filter.column ? filter : undefined), [model.rows, filter]);
  const shown = rows.slice(page * PAGE, (page + 1) * PAGE);
  const invocationKeys = model.cellKeys.filter((k) => k.startsWith("application-"));
  const annotationKeys = model.cellKeys.filter((k) => k.startsWith("evaluator-"));
  const tcIds = shown.map((r) => r.testcaseId).filter(Boolean) as string[];
  const appTraces = shown.flatMap((r) => invocationKeys.map((k) => r.cells[k]?.traceId)).filter(Boolean) as string[];
  const inputs = useQuery({ queryKey: ["testcases", tcIds], queryFn: () => testcases(tcIds), enabled: tcIds.length > 0 });
  // A cell's trace reaches the trace store a moment after its result
  // (tracing → stream → writer): read again until every one is there.
  const wanted = new Set(appTraces.map(normTraceId)).size;
  const outputs = useQuery({
    queryKey: ["trace-outputs", appTraces],
    queryFn: () => traceOutputs(appTraces),
    enabled: appTraces.length > 0,
    refetchInterval: (q) => (q.state.data && q.state.data.size < wanted ? 2000 : false),
  });
  const tcById = new Map((inputs.data ?? []).map((t) => [t.id, t.data]));

  return (
    <section data-testid="results">
      <h2>Results</h2>
      <div style={{ display: "flex", gap: 6, alignItems: "center" }}>
        Filter by score{" "}
        <select value={filter.column} onChange={(e) => (setFilter({ ...filter, column: e.currentTarget.value }), setPage(0))} aria-label="score column">
          <option value="">(none)</option>
          {model.scores.map((s) => (
            <option key={s.key} value={s.key}>
              {s.label}
            </option>
          ))}
        </select>
        <select value={filter.op} onChange={(e) => (setFilter({ ...filter, op: e.currentTarget.value as ScoreOp }), setPage(0))} aria-label="score operator">
          {[">=", "<=", "=", ">", "<", "missing"].map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        {filter.op !== "missing" && (
          <input type="number" step="any" value={filter.value} onChange={(e) => (setFilter({ ...filter, value: Number(e.currentTarget.value) }), setPage(0))} aria-label="score value" style={{ width: 80 }} />
        )}
        <span data-testid="results-count">
          {rows.length} of {model.rows.length} scenarios
        </span>
      </div>
      <div className="table-scroll">
      <table className="results">
        <thead>
          <tr>
            <th>#</th>
            <th>inputs</th>
            {invocationKeys.map((k) => (
              <th key={k}>{model.labels[k.replace(/\/\d+$/, "")] ?? k} output</th>
            ))}
            {annotationKeys.map((k) => (
              <th key={k}>
                {model.labels[k.replace(/\/\d+$/, "")] ?? k}
                {k.endsWith("/0") ? "" : ` #${k.slice(k.lastIndexOf("/") + 1)}`}
              </th>
            ))}
            {model.scores.map((s) => (
              <th key={s.key}>{s.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((r, i) => (
            <tr key={r.scenarioId} data-testid="result-row" className={`status-${r.status}`}>
              <td>{page * PAGE + i + 1}</td>
              <td>
                <code style={{ fontSize: 12 }}>{r.testcaseId ? JSON.stringify(stripDedup(tcById.get(r.testcaseId))) ?? "…" : ""}</code>
              </td>
              {invocationKeys.map((k) => {
                const c = r.cells[k];
                const out = c?.traceId ? outputs.data?.get(normTraceId(c.traceId))?.outputs : undefined;
                return (
                  <td key={k}>
                    {out !== undefined ? (typeof out === "string" ? out : JSON.stringify(out)) : c?.error ?? c?.status}
                    {c?.traceId && (
                      <>
                        {" "}
                        <Link to={`/traces/${normTraceId(c.traceId)}`} title="trace">
                          ↗
                        </Link>
                      </>
                    )}
                  </td>
                );
              })}
              {annotationKeys.map((k) => {
                const c = r.cells[k];
                return (
                  <td key={k} title={c?.error}>
                    {c?.status}
                    {c?.traceId && (
                      <>
                        {" "}
                        <Link to={`/traces/${normTraceId(c.traceId)}`} title="trace">
                          ↗
                        </Link>
                      </>
                    )}
                  </td>
                );
              })}
              {model.scores.map((s) => (
                <td key={s.key}>{r.scores[s.key] !== undefined ? fmt(r.scores[s.key]) : "—"}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      {rows.length > PAGE && (
        <p>
          <button disabled={page === 0} onClick={() => setPage(page - 1)}>
            ←
          </button>{" "}
          page {page + 1} of {Math.ceil(rows.length / PAGE)}{" "}
          <button disabled={(page + 1) * PAGE >= rows.length} onClick={() => setPage(page + 1)}>
            →
          </button>
        </p>
      )}
    </section>
  );
}

function stripDedup(d: Record<string, unknown> | undefined) {
  if (!d) return d;
  const { testcase_dedup_id: _, ...rest } = d;
  return rest;
}

const DEFAULTS: Record<string, string> = {
  "attributes.ag.metrics.duration.cumulative": "latency (ms)",
  "attributes.ag.metrics.costs.cumulative.total": "cost",
  "attributes.ag.metrics.tokens.cumulative.total": "tokens",
  "attributes.ag.metrics.errors.cumulative": "errors",
};

export function Charts({ m, steps: runSteps }: { m: MetricRecord; steps?: Step[] }) {
  const steps = Object.entries(m.data ?? {});
  return (
    <div data-testid="charts">
      {steps.map(([step, paths]) => {
        const evaluator = step.startsWith("evaluator-");
        const items = Object.entries(paths).filter(([path, s]) => (evaluator ? !DEFAULTS[path] || path.includes("duration") : DEFAULTS[path] && !path.includes("errors")) && (s.hist?.length || s.freq?.length));
        if (items.length === 0) return null;
        return (
          <section key={step}>
            <h3>{stepLabel(step, runSteps)}</h3>
            <div style={{ display: "flex", flexWrap: "wrap", gap: 16 }}>
              {items.map(([path, s]) => {
                const title = DEFAULTS[path] ?? path.replace(/^attributes\.ag\.data\.outputs\./, "");
                return s.type === "binary" || (!s.hist?.length && s.freq?.length) ? <PassRate key={path} title={title} stats={s} /> : <Histogram key={path} title={title} stats={s} />;
              })}
            </div>
          </section>
        );
      })}
    </div>
  );
}
