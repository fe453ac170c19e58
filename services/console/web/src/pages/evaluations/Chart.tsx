// Charts of a run's metrics, drawn with uPlot, which is loaded only when a
// chart is shown (a dynamic import: its own chunk, not in the initial JS).
import { useEffect, useRef, useState } from "react";
import type { MetricStats } from "../../api/evaluations";

type UPlotCtor = typeof import("uplot");
let loading: Promise<UPlotCtor> | null = null;
function loadUPlot(): Promise<UPlotCtor> {
  loading ??= Promise.all([import("uplot"), import("uplot/dist/uPlot.min.css")]).then(([m]) => m.default);
  return loading;
}

/** Histogram draws a metric's histogram bins as bars. */
export function Histogram({ title, stats, width = 360, height = 180, format = fmt }: { title: string; stats: MetricStats; width?: number; height?: number; format?: (x: number) => string }) {
  const el = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let plot: { destroy(): void } | null = null;
    let cancelled = false;
    const bins = stats.hist ?? [];
    if (bins.length === 0) return;
    loadUPlot()
      .then((UPlot) => {
        if (cancelled || !el.current) return;
        const xs = bins.map((b) => (b.edge[0] + b.edge[1]) / 2);
        const ys = bins.map((b) => b.count);
        // A bin's width, for the margins; one bin of one value has none:
        // its value's own scale (a cost of $0.0000015 is not drawn on 0–0.5).
        const own = Math.abs(bins[0].edge[1] - bins[0].edge[0]);
        const w = bins.length > 1 ? Math.abs(bins[1].edge[0] - bins[0].edge[0]) : own || Math.abs(bins[0].edge[0]) || 1;
        plot = new UPlot(
          {
            width,
            height,
            legend: { show: false },
            scales: { x: { time: false, range: () => [bins[0].edge[0] - w / 2, bins[bins.length - 1].edge[1] + w / 2] } },
            // Ticks far enough apart for labels as long as "$0.0000015".
            axes: [{ space: 90, values: (_u: unknown, splits: number[]) => splits.map((v) => format(v)) }, { label: "count" }],
            series: [{}, { label: title, fill: "rgba(60,120,220,0.5)", stroke: "rgb(60,120,220)", paths: UPlot.paths.bars!({ size: [0.9, 100] }), points: { show: false } }],
          },
          [xs, ys],
          el.current,
        );
      })
      .catch((e: Error) => setFailed(e.message));
    return () => {
      cancelled = true;
      plot?.destroy();
    };
  }, [stats, title, width, height, format]);
  return (
    <figure className="chart" data-testid="chart" style={{ margin: 0 }}>
      <figcaption>
        <strong>{title}</strong> — n={stats.count ?? 0}
        {stats.mean !== undefined && `, mean ${format(stats.mean)}`}
        {stats.min !== undefined && `, min ${format(stats.min)}, max ${format(stats.max!)}`}
      </figcaption>
      <div ref={el} />
      {failed && <p role="alert">chart: {failed}</p>}
    </figure>
  );
}

/** PassRate shows a binary metric's rate of true over the verdicts given.
 * An evaluator that errored records false with its error (errors: the
 * step's error count), and a value that is neither true nor false is no
 * verdict: both are counted apart, never as failures, and a metric
 * without any verdict reads "did not run". */
export function PassRate({ title, stats, errors = 0, width = 360 }: { title: string; stats: MetricStats; errors?: number; width?: number }) {
  const { pass, fail, errored, none } = verdictCounts(stats, errors);
  // An evaluator's verdict is its output "success": named again under the
  // evaluator's heading it reads as a result ("success — did not run").
  const name = title === "success" ? null : <strong>{title}</strong>;
  const dash = name ? " — " : "";
  const total = pass + fail;
  const apart = [errored > 0 && `${errored} errored`, none > 0 && `${none} without a verdict`].filter(Boolean).join(", ");
  if (total === 0) {
    return (
      <figure className="chart" data-testid="chart" style={{ margin: 0 }}>
        <figcaption>
          {name}
          {dash}
          <span className="cell-error">did not run</span>
          {apart && ` (${apart})`}
        </figcaption>
      </figure>
    );
  }
  const rate = pass / total;
  return (
    <figure className="chart" data-testid="chart" style={{ margin: 0 }}>
      <figcaption>
        {name}
        {dash}pass rate {(rate * 100).toFixed(1)}% ({pass}/{total}){apart && `; ${apart}`}
      </figcaption>
      <div style={{ width, height: 18, background: "#f3d0d0" }} role="meter" aria-valuenow={rate} aria-valuemin={0} aria-valuemax={1}>
        <div style={{ width: `${rate * 100}%`, height: "100%", background: "#4a4" }} />
      </div>
    </figure>
  );
}

/** verdictCounts splits a binary metric's frequencies: pass (true), fail
 * (false that is not an error: errors, the step's error count, are false
 * values an erroring evaluator recorded), errored, and none (missing,
 * empty, null). */
export function verdictCounts(stats: MetricStats, errors = 0): { pass: number; fail: number; errored: number; none: number } {
  let pass = 0,
    falses = 0,
    none = 0;
  for (const f of stats.freq ?? []) {
    if (f.value === true || f.value === "true") pass += f.count;
    else if (f.value === false || f.value === "false") falses += f.count;
    else none += f.count;
  }
  const errored = Math.max(0, Math.min(Math.round(errors), falses));
  return { pass, fail: falses - errored, errored, none };
}

/** errorCount is the errors an evaluator step recorded (its
 * attributes.ag.metrics.errors.cumulative: the sum over its scenarios). */
export function errorCount(paths: Record<string, MetricStats> | undefined): number {
  const e = paths?.["attributes.ag.metrics.errors.cumulative"];
  return e ? (e.sum ?? (e.mean ?? 0) * (e.count ?? 0)) : 0;
}

export function fmt(x: number): string {
  if (!isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 0.001 || a >= 1e6)) return x.toExponential(2);
  return String(Math.round(x * 1000) / 1000);
}
