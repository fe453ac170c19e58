// The diff of two revisions' parameters: every leaf path whose value
// differs (arrays indexed), with its value before and after.

export interface ParamChange {
  path: string;
  before?: unknown;
  after?: unknown;
  kind: "added" | "removed" | "changed";
}

export function flatten(v: unknown, prefix = "", out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (v !== null && typeof v === "object") {
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v as Record<string, unknown>);
    if (entries.length === 0) out.set(prefix, v);
    for (const [k, x] of entries) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, v);
  }
  return out;
}

export function diffParams(a: unknown, b: unknown): ParamChange[] {
  const fa = flatten(a ?? {});
  const fb = flatten(b ?? {});
  const out: ParamChange[] = [];
  for (const [p, va] of fa) {
    if (!fb.has(p)) out.push({ path: p, before: va, kind: "removed" });
    else if (JSON.stringify(va) !== JSON.stringify(fb.get(p))) out.push({ path: p, before: va, after: fb.get(p), kind: "changed" });
  }
  for (const [p, vb] of fb) if (!fa.has(p)) out.push({ path: p, after: vb, kind: "added" });
  return out.sort((x, y) => x.path.localeCompare(y.path));
}
