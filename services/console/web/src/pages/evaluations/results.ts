// The results table's model: the run's export rows turned into scenario
// rows with, per step, the cell's status, trace and error, and per
// evaluator metric its score; and the score filter.
import type { ExportDoc, ExportRow, Step } from "../../api/evaluations";

export interface Cell {
  status?: string;
  traceId?: string;
  error?: string;
}

export interface ScoreColumn {
  key: string; // the export column: "<step key>/<metric path>"
  step: string;
  path: string;
  label: string;
}

export interface ResultRow {
  scenarioId: string;
  status: string;
  testcaseId?: string;
  cells: Record<string, Cell>; // by "<step key>/<repeat>"
  scores: Record<string, number>; // by ScoreColumn.key
}

/** stepLabel names a step by what it references (the application and its
 * version, the evaluator), else by its key. A key the run does not
 * declare is an annotation linked as "<invocation step key>.<evaluator
 * slug>" (how the compatible web app's annotation drawers name them): it
 * is named by that evaluator's slug (after the run's invocation step key
 * when it starts with one, else after the last dot). */
export function stepLabel(key: string, steps: Step[] = []): string {
  const s = steps.find((x) => x.key === key);
  if (!s) return undeclaredLabel(key, steps);
  const r = s.references ?? {};
  if (r.application?.slug) return r.application.slug + (r.application_revision?.version ? ` v${r.application_revision.version}` : "");
  if (r.evaluator?.slug) return r.evaluator.slug;
  if (r.testset?.slug) return r.testset.slug;
  return key;
}

function undeclaredLabel(key: string, steps: Step[]): string {
  const inv = steps.find((x) => x.type === "invocation" && key.startsWith(x.key + "."));
  const slug = inv ? key.slice(inv.key.length + 1) : key.includes(".") ? key.slice(key.lastIndexOf(".") + 1) : "";
  return slug || key;
}

export interface ResultModel {
  labels: Record<string, string>; // step key → label
  cellKeys: string[]; // "<step key>/<repeat>", in export order
  scores: ScoreColumn[];
  rows: ResultRow[];
}

const CELL = /^(.*)\/(\d+)\/(status|trace_id|error)$/;

export function buildResults(doc: ExportDoc, steps: Step[] = []): ResultModel {
  const stepKeys = new Set(steps.map((s) => s.key));
  const cellKeys: string[] = [];
  const scores: ScoreColumn[] = [];
  for (const c of doc.columns) {
    if (c === "scenario_id" || c === "status" || c === "testcase_id") continue;
    const m = CELL.exec(c);
    if (m) {
      const k = `${m[1]}/${m[2]}`;
      if (!cellKeys.includes(k)) cellKeys.push(k);
      stepKeys.add(m[1]); // also the keys the run does not declare
      continue;
    }
    // "<step>/<path>": the step is the longest known step key prefix, or
    // the part before the first "/" when the steps are not known.
    let step = "";
    for (const s of stepKeys) if (c.startsWith(s + "/") && s.length > step.length) step = s;
    if (!step) step = c.slice(0, Math.max(0, c.indexOf("/")));
    const path = c.slice(step.length + 1);
    scores.push({ key: c, step, path, label: `${stepLabel(step, steps).replace(/^evaluator-/, "")} · ${path.replace(/^attributes\.ag\.(data\.outputs\.|metrics\.)/, "")}` });
  }
  const rows = doc.rows.map((r) => toRow(r, cellKeys, scores));
  const labels: Record<string, string> = {};
  for (const k of [...cellKeys.map((c) => c.replace(/\/\d+$/, "")), ...scores.map((x) => x.step)]) labels[k] = stepLabel(k, steps);
  return { labels, cellKeys, scores, rows };
}

function toRow(r: ExportRow, cellKeys: string[], scores: ScoreColumn[]): ResultRow {
  const cells: Record<string, Cell> = {};
  for (const k of cellKeys) {
    cells[k] = {
      status: r[`${k}/status`] as string | undefined,
      traceId: r[`${k}/trace_id`] as string | undefined,
      error: r[`${k}/error`] as string | undefined,
    };
  }
  const sc: Record<string, number> = {};
  for (const s of scores) {
    const v = r[s.key];
    if (typeof v === "number") sc[s.key] = v;
    else if (typeof v === "boolean") sc[s.key] = v ? 1 : 0;
  }
  return { scenarioId: r.scenario_id, status: r.status, testcaseId: r.testcase_id, cells, scores: sc };
}

export type ScoreOp = ">=" | "<=" | "=" | "<" | ">" | "missing";

export interface ScoreFilter {
  column: string;
  op: ScoreOp;
  value: number;
}

/** filterByScore keeps the rows whose score in the filter's column meets
 * it; "missing" keeps the rows without a score there (failed or pending). */
export function filterByScore(rows: ResultRow[], f: ScoreFilter | undefined): ResultRow[] {
  if (!f || !f.column) return rows;
  return rows.filter((r) => {
    const v = r.scores[f.column];
    if (f.op === "missing") return v === undefined;
    if (v === undefined) return false;
    switch (f.op) {
      case ">=":
        return v >= f.value;
      case "<=":
        return v <= f.value;
      case ">":
        return v > f.value;
      case "<":
        return v < f.value;
      case "=":
        return Math.abs(v - f.value) < 1e-9;
    }
    return true;
  });
}
