import type { Reference } from "../api/tracing";

// References on spans point at testsets, applications and evaluators (and their variants
// and revisions). The console links each to the page of its artifact, with the revision
// when there is one.

export interface RefLink {
  key: string;
  label: string;
  to?: string;
}

const FAMILIES: { family: string; page: string }[] = [
  { family: "testset", page: "/testsets" },
  { family: "application", page: "/apps" },
  { family: "evaluator", page: "/evaluators" },
];

/** refs as a list (span references) or a map (simple traces, annotations). */
export function referenceLinks(refs: Reference[] | Record<string, Reference> | undefined): RefLink[] {
  if (!refs) return [];
  const byKey: Record<string, Reference> = {};
  if (Array.isArray(refs)) {
    for (const r of refs) byKey[r.attributes?.key ?? "reference"] = r;
  } else {
    Object.assign(byKey, refs);
  }
  const out: RefLink[] = [];
  for (const [key, r] of Object.entries(byKey)) {
    const fam = FAMILIES.find((f) => key === f.family || key.startsWith(f.family + "_"));
    const label = `${key}: ${r.slug ?? r.id ?? "?"}${r.version !== undefined ? ` v${r.version}` : ""}`;
    if (!fam) {
      out.push({ key, label });
      continue;
    }
    const artifact = byKey[fam.family];
    const revision = byKey[fam.family + "_revision"];
    let to: string | undefined;
    if (artifact?.id) {
      to = `${fam.page}/${artifact.id}`;
      if (revision?.id) to += `?revision=${revision.id}`;
    } else if (key === fam.family + "_revision" && r.id) {
      to = `${fam.page}/${r.id}?by=revision`;
    }
    out.push({ key, label, to });
  }
  return out;
}
