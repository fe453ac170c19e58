// The working copy of a testset revision being edited, and the commit delta it
// comes to (services/registry/internal/testcases/delta.go: column operations on
// the base rows first — remove, rename, add — then row replace, remove and
// add).
import type { Delta, Testcase } from "../../api/testsets";

export const DEDUP = "testcase_dedup_id";

export interface WorkRow {
  baseId?: string; // the base testcase id; absent for an added row
  data: Record<string, unknown>;
  edited?: boolean;
}

export interface Work {
  baseColumns: string[];
  columns: { name: string; origin?: string }[]; // origin: the base column it was
  rows: WorkRow[];
  baseIds: string[];
}

export function columnsOf(rows: { data: Record<string, unknown> }[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.data ?? {})) if (k !== DEDUP) seen.add(k);
  return [...seen];
}

export function startWork(testcases: Testcase[]): Work {
  const baseColumns = columnsOf(testcases);
  return {
    baseColumns,
    columns: baseColumns.map((c) => ({ name: c, origin: c })),
    rows: testcases.map((t) => ({ baseId: t.id, data: t.data })),
    baseIds: testcases.map((t) => t.id),
  };
}

export function editCell(w: Work, row: number, col: string, value: string): Work {
  const rows = w.rows.slice();
  rows[row] = { ...rows[row], data: { ...rows[row].data, [col]: value }, edited: true };
  return { ...w, rows };
}

export function addRow(w: Work): Work {
  const data: Record<string, unknown> = {};
  for (const c of w.columns) data[c.name] = "";
  return { ...w, rows: [...w.rows, { data }] };
}

export function removeRows(w: Work, idx: Set<number>): Work {
  return { ...w, rows: w.rows.filter((_, i) => !idx.has(i)) };
}

export function addColumn(w: Work, name: string): Work {
  if (!name || w.columns.some((c) => c.name === name)) return w;
  // The server adds "" to the base rows; the working copy shows the same.
  return { ...w, columns: [...w.columns, { name }], rows: rowsWith(w.rows, (d) => (name in d ? d : { ...d, [name]: "" })) };
}

export function removeColumn(w: Work, name: string): Work {
  return {
    ...w,
    columns: w.columns.filter((c) => c.name !== name),
    rows: rowsWith(w.rows, (d) => {
      if (!(name in d)) return d;
      const { [name]: _, ...rest } = d;
      return rest;
    }),
  };
}

export function renameColumn(w: Work, from: string, to: string): Work {
  if (!to || from === to || w.columns.some((c) => c.name === to)) return w;
  return {
    ...w,
    columns: w.columns.map((c) => (c.name === from ? { ...c, name: to } : c)),
    rows: rowsWith(w.rows, (d) => {
      if (!(from in d)) return d;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(d)) out[k === from ? to : k] = v;
      return out;
    }),
  };
}

// rowsWith rewrites every row's data for a column operation; base rows are
// not marked edited (the column operation reaches them on the server).
function rowsWith(rows: WorkRow[], f: (d: Record<string, unknown>) => Record<string, unknown>): WorkRow[] {
  return rows.map((r) => {
    const d = f(r.data);
    return d === r.data ? r : { ...r, data: d };
  });
}

export function isDirty(w: Work): boolean {
  return toDelta(w) !== null;
}

/** toDelta is the commit delta of the working copy, or null when nothing changed. */
export function toDelta(w: Work): Delta | null {
  const kept = new Set(w.rows.filter((r) => r.baseId).map((r) => r.baseId!));
  const remove = [...new Set(w.baseIds.filter((id) => !kept.has(id)))];
  const replace = w.rows.filter((r) => r.baseId && r.edited).map((r) => ({ id: r.baseId!, data: r.data }));
  const add = w.rows.filter((r) => !r.baseId).map((r) => ({ data: r.data }));
  const origins = new Set(w.columns.map((c) => c.origin).filter(Boolean));
  const colRemove = w.baseColumns.filter((c) => !origins.has(c));
  const colRename = w.columns.filter((c) => c.origin && c.origin !== c.name).map((c) => [c.origin!, c.name] as [string, string]);
  const colAdd = w.columns.filter((c) => !c.origin).map((c) => c.name);
  const d: Delta = {};
  if (remove.length || replace.length || add.length) d.rows = { add, remove, replace };
  if (colRemove.length || colRename.length || colAdd.length) d.columns = { add: colAdd, remove: colRemove, replace: colRename };
  return d.rows || d.columns ? d : null;
}
