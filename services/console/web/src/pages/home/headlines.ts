// The headline scores of a run for the home page: each evaluator's outputs
// named by the evaluator (not its step key or id), a boolean as its pass
// rate, a number as its mean.
import type { MetricRecord, MetricStats, Step } from "../../api/evaluations";

export interface Headline {
  label: string;
  value: string;
  title: string;
}

const OUTPUTS = "attributes.ag.data.outputs.";

function passRate(s: MetricStats): { rate: number; pass: number; total: number } | undefined {
  const freq = s.freq ?? [];
  const total = freq.reduce((a, f) => a + f.count, 0);
  if (!total) return undefined;
  const pass = freq.filter((f) => f.value === true || f.value === "true").reduce((a, f) => a + f.count, 0);
  return { rate: pass / total, pass, total };
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
        const r = passRate(s);
        if (r) out.push({ label, value: `${(r.rate * 100).toFixed(0)}%`, title: `${leaf}: ${r.pass} of ${r.total} passed` });
      } else if (typeof s.mean === "number") {
        out.push({ label, value: Number.isInteger(s.mean) ? String(s.mean) : s.mean.toFixed(2), title: `${leaf}: mean of ${s.count ?? "?"}` });
      }
    }
  }
  return out;
}
