// The diff of two testset revisions. Rows are matched by identity: their
// dedup id (data.testcase_dedup_id), which uploads and simple edits give
// every row and delta commits keep in the data, so an edited row keeps its
// key while its content id (a hash of the data) changes. Rows without one
// are matched by content id, so an edit of such a row shows as removed +
// added. Columns are compared as sets first: a column added (or removed)
// is reported once, and its empty cells are not a change of every row; a
// kept row whose cell in it holds a value is a change of that row. Rows are
// named by position and first column value, never by an id.

export interface Row {
  id: string;
  data: Record<string, unknown>;
}

export interface ChangedRow {
  key: string;
  /** the 1-based position of the row in the newer revision */
  row: number;
  /** the row's value in the first column (a question, a country) */
  name: string;
  before: Row;
  after: Row;
  columns: string[]; // the data keys whose values differ
}

export interface PlacedRow extends Row {
  /** 1-based position: in the newer revision (added) or the older (removed) */
  row: number;
  name: string;
}

export interface RevisionDiff {
  columnsAdded: string[];
  columnsRemoved: string[];
  added: PlacedRow[];
  removed: PlacedRow[];
  changed: ChangedRow[];
  unchanged: number;
}

const DEDUP = "testcase_dedup_id";

function keyOf(r: Row): string {
  const d = r.data?.[DEDUP];
  return typeof d === "string" && d !== "" ? "d:" + d : "i:" + r.id;
}

function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.data ?? {})) if (k !== DEDUP) seen.add(k);
  return [...seen];
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === "";

/** nameOf is a row's value in the given column, shortened, as text. */
export function nameOf(r: Row, col: string | undefined): string {
  if (!col) return "";
  const v = r.data?.[col];
  if (isEmpty(v)) return "";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 39) + "…" : s;
}

export function diffRevisions(before: Row[], after: Row[]): RevisionDiff {
  const ca = columnsOf(before);
  const cb = columnsOf(after);
  const inA = new Set(ca);
  const inB = new Set(cb);
  const columnsAdded = cb.filter((c) => !inA.has(c));
  const columnsRemoved = ca.filter((c) => !inB.has(c));
  const all = [...cb, ...columnsRemoved];

  const old = new Map<string, number[]>();
  before.forEach((r, i) => {
    const k = keyOf(r);
    const l = old.get(k);
    if (l) l.push(i);
    else old.set(k, [i]);
  });
  const used = new Set<number>();
  const added: PlacedRow[] = [];
  const changed: ChangedRow[] = [];
  let unchanged = 0;
  after.forEach((r, j) => {
    const k = keyOf(r);
    const i = old.get(k)?.shift();
    if (i === undefined) {
      added.push({ ...r, row: j + 1, name: nameOf(r, cb[0]) });
      return;
    }
    used.add(i);
    const prev = before[i];
    if (prev.id === r.id) {
      unchanged++;
      return;
    }
    const columns = all.filter((c) => {
      const a = prev.data?.[c];
      const b = r.data?.[c];
      if (JSON.stringify(a) === JSON.stringify(b)) return false;
      // An added or removed column's empty cell is the column change.
      if ((!inA.has(c) || !inB.has(c)) && isEmpty(a) && isEmpty(b)) return false;
      return true;
    });
    if (columns.length === 0) unchanged++;
    else changed.push({ key: k.slice(2), row: j + 1, name: nameOf(r, cb[0]), before: prev, after: r, columns });
  });
  const removed: PlacedRow[] = [];
  before.forEach((r, i) => {
    if (!used.has(i)) removed.push({ ...r, row: i + 1, name: nameOf(r, ca[0]) });
  });
  return { columnsAdded, columnsRemoved, added, removed, changed, unchanged };
}
