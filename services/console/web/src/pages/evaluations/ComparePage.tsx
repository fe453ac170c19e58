// /console/evaluations/compare?runs=a,b,… — two or more runs over the same
// testset revision. Runs are named by their application, variant and
// revision; metrics by evaluator. Each delta to the first run (the
// baseline) comes with the 95% interval the registry computes, its
// interval corrected for the comparison's number of tests (Holm) and the
// registry's verdict: improved or regressed by the metric's direction
// (lower latency, cost or errors is better; a higher score is better),
// inconclusive when the corrected interval spans 0, and how many
// testcases a small difference would need. Below, testcase by testcase, the inputs, each run's
// output (the candidate's marked against the baseline's) and scores,
// with a "regressions only" filter.
import { useMemo, useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import { compare, getRun, invocationTraces, progress, testcases, traceOutputs, type ComparedScenario, type Comparison, type Run } from "../../api/evaluations";
import { listApps, listAppVariants } from "../../api/apps";
import { listEvaluators } from "../../api/evaluators";
import { ErrorBox } from "../../components/ErrorBox";
import { applicationLabel, lowerIsBetter, metricName, stepName, type NameBook } from "../../lib/stepNames";
import { usd } from "../../lib/usd";
import { wordDiff } from "../../lib/wordDiff";
import { fmt } from "./Chart";

const DONE = ["success", "failure", "errors", "cancelled"];
const PAGE = 50;
const OUTPUTS = "attributes.ag.data.outputs.";

export type Verdict = "improved" | "regressed" | "inconclusive" | "same" | "none";

type Side = Comparison["metrics"][number]["runs"][number];

/** verdict is the registry's verdict of a delta (Holm-corrected over the
 * comparison's tests, by the metric's direction); a registry without
 * verdicts is read by the 95% interval and the metric's direction. */
export function verdict(path: string, side: Pick<Side, "delta" | "ci" | "verdict">, direction?: "higher" | "lower"): Verdict {
  const { delta, ci } = side;
  if (delta === undefined) return "none";
  if (delta === 0 && (!ci || (ci.low === 0 && ci.high === 0))) return "same";
  if (side.verdict) return side.verdict;
  if (!ci) return "none";
  if (ci.low <= 0 && ci.high >= 0) return "inconclusive";
  const lower = direction ? direction === "lower" : lowerIsBetter(path);
  return delta < 0 === lower ? "improved" : "regressed";
}

const COLOURS: Record<Verdict, string> = { improved: "#027a48", regressed: "#b42318", inconclusive: "#6b7080", same: "#6b7080", none: "#6b7080" };
const WORDS: Record<Verdict, string> = { improved: "improved", regressed: "regressed", inconclusive: "inconclusive", same: "no change", none: "no interval" };

async function nameBook(runs: (Run | undefined)[]): Promise<NameBook> {
  const appIds = new Set<string>();
  for (const r of runs) for (const s of r?.data?.steps ?? []) if (s.references?.application?.id) appIds.add(s.references.application.id);
  const [apps, evaluators, variants] = await Promise.all([listApps(), listEvaluators(), Promise.all([...appIds].map(listAppVariants))]);
  const book: NameBook = { apps: new Map(), variants: new Map(), evaluators: new Map() };
  for (const a of apps) if (a.name) book.apps.set(a.id, a.name);
  for (const e of evaluators) if (e.name) book.evaluators.set(e.id, e.name);
  for (const v of variants.flat()) if (v.name) book.variants.set(v.id, v.name);
  return book;
}

/** runTitle is how a run is named: its application label, then its name. */
function runTitle(r: Run | undefined, book: NameBook | undefined): { app?: string; name: string } {
  const inv = r?.data?.steps?.find((s) => s.type === "invocation");
  return { app: inv && book ? applicationLabel(inv, book) : undefined, name: r?.name || "unnamed run" };
}

interface Row {
  index: number;
  testcaseId?: string;
  sides: ComparedScenario["runs"];
  regressed: boolean;
}

export default function ComparePage() {
  const [sp] = useSearchParams();
  const ids = (sp.get("runs") ?? "").split(",").filter(Boolean);
  const runs = useQuery({ queryKey: ["runs-of", ids], queryFn: () => Promise.all(ids.map(getRun)) });
  const book = useQuery({ queryKey: ["name-book", ids], queryFn: () => nameBook(runs.data ?? []), enabled: !!runs.data });
  // Runs whose records say they ended need no progress: a progress read
  // counts every cell of the run, and two of them beside the comparison
  // slowed it by a third on 5,000-scenario runs (TestCompare/large_runs).
  const recordsDone = !!runs.data && runs.data.every((r) => r && DONE.includes(r.status));
  const progs = useQuery({
    queryKey: ["progress-of", ids],
    queryFn: () => Promise.all(ids.map(progress)),
    enabled: !!runs.data && !recordsDone,
    refetchInterval: (q) => (q.state.data?.every((p) => p && DONE.includes(p.status)) ? false : 1500),
  });
  const allDone = recordsDone || progs.data?.every((p) => p && DONE.includes(p.status));
  // Asked at once (not after the progress): finished runs, the usual case,
  // are then drawn one round trip sooner. Asked again only when runs seen
  // going have ended.
  const sawRunning = useRef(false);
  if (progs.data && !allDone) sawRunning.current = true;
  const cmp = useQuery({
    queryKey: ["compare", ids, sawRunning.current && !!allDone],
    queryFn: () => compare(ids),
    enabled: ids.length >= 2,
    placeholderData: (prev) => prev,
  });
  const [onlyRegressions, setOnlyRegressions] = useState(false);
  const [shown, setShown] = useState(PAGE);

  const runOf = (i: number) => runs.data?.[i];
  const stepOf = (i: number, key?: string) => runOf(i)?.data?.steps?.find((s) => s.key === key);
  // The compared step's name: the first run that has the step names it.
  const metricStep = (m: Comparison["metrics"][number]) => {
    const i = m.runs.findIndex((r) => r.step_key);
    return m.kind === "invocation" ? "application" : stepName(m.runs[i]?.step_key ?? m.step, stepOf(i, m.runs[i]?.step_key), book.data);
  };
  // Scores compared per testcase: the evaluators' outputs.
  const scores = useMemo(() => (cmp.data?.metrics ?? []).filter((m) => m.kind === "annotation" && m.path.startsWith(OUTPUTS)), [cmp.data]);
  const rows: Row[] = useMemo(() => {
    return (cmp.data?.scenarios ?? []).map((s, index) => {
      const base = s.runs[0];
      let regressed = false;
      for (const m of scores) {
        const b = base?.values?.[m.step]?.[m.path];
        if (b === undefined) continue;
        for (const side of s.runs.slice(1)) {
          const v = side?.values?.[m.step]?.[m.path];
          if (v !== undefined && (lowerIsBetter(m.path) ? v > b : v < b)) regressed = true;
        }
      }
      return { index, testcaseId: s.testcase_id, sides: s.runs, regressed };
    });
  }, [cmp.data, scores]);
  const filtered = onlyRegressions ? rows.filter((r) => r.regressed) : rows;
  const visible = filtered.slice(0, shown);

  const tcIds = visible.map((r) => r.testcaseId).filter(Boolean) as string[];
  const inputs = useQuery({ queryKey: ["compare-testcases", tcIds], queryFn: () => testcases(tcIds), enabled: tcIds.length > 0 });
  const outputs = useQuery({
    queryKey: ["compare-outputs", ids, visible.map((r) => r.index)],
    enabled: !!cmp.data && !!runs.data && visible.length > 0,
    queryFn: async () => {
      const perRun = await Promise.all(
        ids.map(async (id, i) => {
          const key = runOf(i)?.data?.steps?.find((s) => s.type === "invocation")?.key;
          const sids = visible.map((r) => r.sides[i]?.scenario_id).filter(Boolean) as string[];
          return key ? invocationTraces(id, key, sids) : new Map<string, string>();
        }),
      );
      const traces = await traceOutputs([...new Set(perRun.flatMap((m) => [...m.values()]))]);
      return perRun.map((m) => new Map([...m].map(([sid, tid]) => [sid, traces.get(tid)?.outputs])));
    },
  });

  const titles = ids.map((_, i) => runTitle(runOf(i), book.data));
  // A column is named by its application label, with the run's name when
  // two runs share it (two runs of one revision).
  const column = (i: number) => {
    const t = titles[i];
    if (!t.app) return t.name;
    return titles.filter((x) => x.app === t.app).length > 1 ? `${t.app} — ${t.name}` : t.app;
  };
  const regressions = rows.filter((r) => r.regressed).length;
  return (
    <div>
      <h1>Compare runs</h1>
      {ids.length < 2 && <p>Pick two or more runs on the evaluations page.</p>}
      <ol data-testid="compared-runs">
        {ids.map((id, i) => (
          <li key={id}>
            <strong>{titles[i].app ?? "…"}</strong> — <Link to={`/evaluations/${id}`}>{titles[i].name}</Link>{" "}
            <span className="badge">{progs.data?.[i]?.status ?? runs.data?.[i]?.status ?? "…"}</span>
            {i === 0 ? " (the baseline: deltas are against it)" : ""}
          </li>
        ))}
      </ol>
      <ErrorBox error={cmp.error || runs.error || book.error} />
      {progs.data && !allDone && ids.length >= 2 && <p>Some runs are still going: the comparison is redrawn when they end.</p>}
      {cmp.data && (
        <>
          {cmp.data.statistics && (
            <p data-testid="compare-method" style={{ color: "#6b7080", fontSize: 13 }}>
              Each delta is the mean of the differences testcase by testcase (a testcase's repeats are averaged first). Verdicts are corrected
              for the {cmp.data.statistics.tests} {cmp.data.statistics.tests === 1 ? "test" : "tests"} of this comparison with Holm's method (at most a{" "}
              {Math.round(cmp.data.statistics.alpha * 100)}% chance of any false verdict): improved or regressed only when the corrected interval
              excludes 0. Two runs of the same revision show the noise.
            </p>
          )}
          <table className="grid" data-testid="comparison">
            <thead>
              <tr>
                <th>evaluator / metric</th>
                {ids.map((id, i) => (
                  <th key={id}>{column(i)}{i === 0 ? " (baseline)" : ""}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {cmp.data.metrics.map((m) => (
                <tr key={m.step + m.path} data-testid="metric-row">
                  <td>
                    {metricStep(m)} · {metricName(m.path)}
                    <div style={{ fontSize: 11, color: "#6b7080" }}>{(m.direction ? m.direction === "lower" : lowerIsBetter(m.path)) ? "lower is better" : "higher is better"}</div>
                  </td>
                  {m.runs.map((r, i) => (
                    <td key={r.run_id}>
                      {r.mean !== undefined ? (m.type === "binary" ? `${points(r.mean)}% pass` : isCost(m.path) ? usd(r.mean) : fmt(r.mean)) : "—"} <span style={{ color: "#6b7080", fontSize: 11 }}>n={r.count}</span>
                      {i > 0 && <Delta path={m.path} direction={m.direction} side={r} rate={m.type === "binary"} />}
                      {r.cost_per_point !== undefined && (
                        <div data-testid="cost-per-point" style={{ color: "#6b7080", fontSize: 11 }} title={m.type === "binary" ? "the run's cost ÷ its pass rate in percent" : "the run's cost ÷ this score's mean"}>
                          {/* A pass rate reads in percent above: a point is a percentage point. */}
                          {usd(m.type === "binary" ? r.cost_per_point / 100 : r.cost_per_point)} per point
                        </div>
                      )}
                    </td>
                  ))}
                </tr>
              ))}
              {cmp.data.costs?.some((c) => c.scenarios > 0) && (
                <tr data-testid="cost-row">
                  <td>
                    cost of the run (USD)
                    <div style={{ fontSize: 11, color: "#6b7080" }}>its scenarios' traced model costs</div>
                  </td>
                  {cmp.data.costs.map((c) => (
                    <td key={c.run_id}>{c.scenarios > 0 ? usd(c.cost) : "—"}</td>
                  ))}
                </tr>
              )}
            </tbody>
          </table>

          <h2>Testcase by testcase</h2>
          <p>
            <label className="inline" style={{ display: "inline-flex", marginRight: 12 }}>
              <input
                type="checkbox"
                style={{ width: "auto" }}
                checked={onlyRegressions}
                onChange={(e) => {
                  setOnlyRegressions(e.currentTarget.checked);
                  setShown(PAGE);
                }}
                aria-label="regressions only"
              />
              regressions only
            </label>
            <span style={{ color: "#6b7080" }}>
              {regressions} of {rows.length} testcases score worse than the baseline on some evaluator
            </span>
          </p>
          <table className="grid" data-testid="scenarios">
            <thead>
              <tr>
                <th>#</th>
                <th>inputs</th>
                {ids.map((id, i) => (
                  <th key={id}>{column(i)}: output and scores</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {visible.map((r) => {
                const tc = inputs.data?.find((t) => t.id === r.testcaseId);
                const outs = ids.map((_, i) => text(outputs.data?.[i]?.get(r.sides[i]?.scenario_id ?? "")));
                return (
                  <tr key={r.index} data-testid="scenario-row" style={r.regressed ? { background: "#fef3f2" } : undefined}>
                    <td>{r.index + 1}</td>
                    <td style={{ fontSize: 12 }}>
                      {tc
                        ? Object.entries(tc.data)
                            .filter(([k]) => !k.startsWith("__") && k !== "testcase_dedup_id")
                            .map(([k, v]) => (
                              <div key={k}>
                                <span style={{ color: "#6b7080" }}>{k}:</span> {typeof v === "string" ? v : JSON.stringify(v)}
                              </div>
                            ))
                        : "…"}
                    </td>
                    {ids.map((id, i) => (
                      <td key={id}>
                        <div data-testid={outs[i] === undefined ? undefined : "output"} style={{ whiteSpace: "pre-wrap" }}>
                          {outs[i] === undefined ? (!r.sides[i] ? "no scenario" : outputs.isFetching || !outputs.data ? "…" : "no output recorded") : i === 0 ? outs[0] : <Diff a={outs[0] ?? ""} b={outs[i] ?? ""} />}
                        </div>
                        <div style={{ fontSize: 12 }}>
                          {scores.map((m) => {
                            const v = r.sides[i]?.values?.[m.step]?.[m.path];
                            const b = r.sides[0]?.values?.[m.step]?.[m.path];
                            const worse = i > 0 && v !== undefined && b !== undefined && (lowerIsBetter(m.path) ? v > b : v < b);
                            return (
                              <span key={m.step + m.path} style={{ marginRight: 8, color: worse ? "#b42318" : undefined }}>
                                {metricStep(m)} · {metricName(m.path)}: {v === undefined ? "—" : m.type === "binary" ? (v === 1 ? "✓" : v === 0 ? "✗" : fmt(v)) : fmt(v)}
                              </span>
                            );
                          })}
                        </div>
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
          {filtered.length > shown && (
            <button onClick={() => setShown(shown + PAGE)}>
              Show {Math.min(PAGE, filtered.length - shown)} more of {filtered.length - shown}
            </button>
          )}
        </>
      )}
    </div>
  );
}

function text(o: unknown): string | undefined {
  if (o === undefined) return undefined;
  if (typeof o === "string") return o;
  return JSON.stringify(o);
}

/** isCost tells the application's cost (dollars) among the metrics. */
function isCost(path: string): boolean {
  return path.endsWith("costs.cumulative.total");
}

/** points is a rate (0..1) in percent, to a tenth of a point. */
function points(x: number): string {
  return String(Math.round(x * 1000) / 10);
}

function Delta({ path, direction, side, rate }: { path: string; direction?: "higher" | "lower"; side: Side; rate: boolean }) {
  const v = verdict(path, side, direction);
  const { delta, ci, adjusted_ci: adj, power } = side;
  if (delta === undefined) return null;
  const wider = adj && ci && (adj.low !== ci.low || adj.high !== ci.high);
  // A pass rate's figures are percentage points: "-0.5" beside a mean of
  // 0.5 reads as a score, not as half the testcases failing.
  const n = (x: number) => (rate ? points(x) : isCost(path) ? usd(x) : fmt(x));
  const unit = rate ? " points" : "";
  return (
    <div data-testid="delta" data-verdict={v} style={{ color: COLOURS[v], fontSize: 12 }}>
      <strong>
        {delta > 0 ? "+" : ""}
        {n(delta)}
        {unit}
      </strong>{" "}
      <span className="badge" style={{ color: COLOURS[v] }}>
        {WORDS[v]}
      </span>
      {ci && (
        <div>
          95% CI {n(ci.low)} to {n(ci.high)}
          {unit}
        </div>
      )}
      {adj && (
        <div data-testid="adjusted-ci" title={`Holm-corrected: the level this test is held to among the comparison's tests; p = ${side.p_adjusted !== undefined ? fmt(side.p_adjusted) : "?"} after correction`}>
          {wider ? `corrected ${fmt((adj.level ?? 0.95) * 100)}% CI ${n(adj.low)} to ${n(adj.high)}${unit}` : "same after correction"} (Holm, {adj.method}, n={adj.n})
        </div>
      )}
      {power?.testcases !== undefined && v !== "same" && (
        <div data-testid="sample-size" style={{ color: "#6b7080" }}>
          ≈{power.testcases.toLocaleString("en")} testcases to detect ±{rate ? `${fmt(power.difference * 100)} points` : fmt(power.difference)}
        </div>
      )}
    </div>
  );
}

function Diff({ a, b }: { a: string; b: string }) {
  return (
    <>
      {wordDiff(a, b).map((p, k) =>
        p.op === "same" ? (
          <span key={k}>{p.text}</span>
        ) : p.op === "del" ? (
          <del key={k} style={{ background: "#fde4e1" }}>{p.text}</del>
        ) : (
          <ins key={k} style={{ background: "#d7f5e3", textDecoration: "none" }}>{p.text}</ins>
        ),
      )}
    </>
  );
}
