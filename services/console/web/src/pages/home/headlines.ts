// The headline scores of a run for the home page: each evaluator's outputs
// named by the evaluator (not its step key or id), a boolean as its pass
// rate, a number as its mean.
import type { MetricRecord, MetricStats, Step } from "../../api/evaluations";
import { errorCount, verdictCounts } from "../evaluations/Chart";

export interface Headline {
  label: string;
  value: string;
  title: string;
}

const OUTPUTS = "attributes.ag.data.outputs.";

/** passRate is over the verdicts given: a scenario where the evaluator
 * errored (it records false with its error) or gave no value is not a
 * failure; no verdict at all is "did not run", not 0%. */
function passRate(s: MetricStats, errors: number): { rate: number; pass: number; total: number; none: number } {
  const c = verdictCounts(s, errors);
  const total = c.pass + c.fail;
  return { rate: total ? c.pass / total : 0, pass: c.pass, total, none: c.errored + c.none };
}

export function headlines(m: MetricRecord, steps: Step[], evaluators: { id: string; slug: string; name?: string }[]): Headline[] {
  const out: Headline[] = [];
  for (const step of steps) {
    if (step.type !== "annotation") continue;
    const ref = step.references?.evaluator;
    const ev = evaluators.find((e) => (ref?.id && e.id === ref.id) || (ref?.slug && e.slug === ref.slug));
    const name = ev?.name || ev?.slug || ref?.slug || step.key.replace(/^evaluator-/, "");
    const paths = Object.entries(m.data?.[step.key] ?? {}).filter(([p]) => p.startsWith(OUTPUTS));
    for (const [path, s] of paths) {
      const leaf = path.slice(OUTPUTS.length);
      const label = paths.length > 1 ? `${name} · ${leaf}` : name;
      if (s.type === "binary" || (s.mean === undefined && s.freq?.some((f) => typeof f.value === "boolean"))) {
        const r = passRate(s, errorCount(m.data?.[step.key]));
        if (r.total) out.push({ label, value: `${(r.rate * 100).toFixed(0)}%`, title: `${leaf}: ${r.pass} of ${r.total} passed${r.none ? `; ${r.none} did not run` : ""}` });
        else if (r.none) out.push({ label, value: "did not run", title: `${leaf}: no verdict in ${r.none} scenario${r.none === 1 ? "" : "s"}` });
      } else if (typeof s.mean === "number") {
        out.push({ label, value: Number.isInteger(s.mean) ? String(s.mean) : s.mean.toFixed(2), title: `${leaf}: mean of ${s.count ?? "?"}` });
      }
    }
  }
  return out;
}
