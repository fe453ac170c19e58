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
      // The JSON export carries the error object; the cell keeps its message.
      error: errorMessage(r[`${k}/error`]),
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

/** Verdict is what an evaluator's cell reads: its main output (the
 * success or score leaf, else the only or first scalar one) as ✓/✗, a
 * number or a label, and the other outputs, shown on hover. */
export interface Verdict {
  text: string;
  kind: "pass" | "fail" | "score" | "label";
  others: [string, string][];
}

function scalarText(v: unknown): string {
  if (typeof v === "boolean") return v ? "✓" : "✗";
  if (typeof v === "number") return fmtNum(v);
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

function fmtNum(x: number): string {
  if (!isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 0.001 || a >= 1e6)) return x.toExponential(2);
  return String(Math.round(x * 1000) / 1000);
}

/** MAIN_LEAVES are the output leaves that carry an evaluator's verdict,
 * in order of preference (the catalog's outputs schemas name them so). */
const MAIN_LEAVES = ["success", "score"];

/** verdictOf reads an evaluator's outputs (a trace's root outputs). */
export function verdictOf(outputs: unknown): Verdict | undefined {
  if (outputs === undefined || outputs === null) return undefined;
  if (typeof outputs !== "object" || Array.isArray(outputs)) return toVerdict(outputs, []);
  const entries = Object.entries(outputs as Record<string, unknown>);
  if (entries.length === 0) return undefined;
  const main =
    MAIN_LEAVES.map((k) => entries.find(([n]) => n === k)).find(Boolean) ??
    entries.find(([, v]) => typeof v === "boolean" || typeof v === "number") ??
    entries[0];
  return toVerdict(main[1], entries.filter(([n]) => n !== main[0]).map(([n, v]) => [n, scalarText(v)]));
}

function toVerdict(v: unknown, others: [string, string][]): Verdict {
  if (typeof v === "boolean") return { text: v ? "✓" : "✗", kind: v ? "pass" : "fail", others };
  if (typeof v === "number") return { text: fmtNum(v), kind: "score", others };
  return { text: scalarText(v), kind: "label", others };
}

/** verdictFromScores reads a row's verdict for an evaluator step from the
 * export's per-scenario metric values, while its trace is not read yet:
 * a binary metric (by the run's metric types, else a "success" leaf) is
 * ✓/✗, a numeric one its number. */
export function verdictFromScores(row: ResultRow, step: string, scores: ScoreColumn[], types: Record<string, string | undefined>): Verdict | undefined {
  const mine = scores.filter((s) => s.step === step && s.path.startsWith("attributes.ag.data.outputs."));
  if (mine.length === 0) return undefined;
  const leaf = (s: ScoreColumn) => s.path.slice("attributes.ag.data.outputs.".length);
  const main = MAIN_LEAVES.map((k) => mine.find((s) => leaf(s) === k)).find(Boolean) ?? mine[0];
  const v = row.scores[main.key];
  if (v === undefined) return undefined;
  const binary = (s: ScoreColumn) => (types[s.key] ? types[s.key] === "binary" : leaf(s) === "success");
  const text = (s: ScoreColumn, x: number) => (binary(s) ? (x >= 0.5 ? "✓" : "✗") : fmtNum(x));
  const others = mine.filter((s) => s !== main && row.scores[s.key] !== undefined).map((s) => [leaf(s), text(s, row.scores[s.key])] as [string, string]);
  if (binary(main)) return { text: text(main, v), kind: v >= 0.5 ? "pass" : "fail", others };
  return { text: text(main, v), kind: "score", others };
}

/** errorMessage is a cell's error as a person reads it: its message, else
 * its JSON. */
export function errorMessage(e: unknown): string | undefined {
  if (e === undefined || e === null || e === "") return undefined;
  if (typeof e === "string") return e;
  if (typeof e === "object" && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message;
  return JSON.stringify(e);
}

/** inTestcaseOrder sorts the rows as the testset lists their testcases
 * (rows of testcases it does not list keep their order, after them). */
export function inTestcaseOrder(rows: ResultRow[], testcaseIds: string[] | undefined): ResultRow[] {
  if (!testcaseIds?.length) return rows;
  const at = new Map(testcaseIds.map((id, i) => [id, i]));
  const idx = (r: ResultRow) => (r.testcaseId !== undefined && at.has(r.testcaseId) ? at.get(r.testcaseId)! : Infinity);
  return rows
    .map((r, i) => [r, i] as const)
    .sort((a, b) => idx(a[0]) - idx(b[0]) || a[1] - b[1])
    .map(([r]) => r);
}

/** EXPECTED_COLUMNS are the testset columns read as the expected answer
 * when no evaluator of the run names one (correct_answer_key). */
export const EXPECTED_COLUMNS = ["correct_answer", "expected_answer", "expected_output", "expected", "reference", "ground_truth"];

/** testsetColumns are the testcases' data keys in first-seen order,
 * without the bookkeeping ones (testcase_dedup_id, __id__ and the like). */
export function testsetColumns(data: (Record<string, unknown> | undefined)[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const d of data)
    for (const k of Object.keys(d ?? {}))
      if (!seen.has(k) && k !== "testcase_dedup_id" && !k.startsWith("__")) {
        seen.add(k);
        out.push(k);
      }
  return out;
}
