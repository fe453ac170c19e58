// The diff of two testset revisions. Rows are matched by their dedup id
// (data.testcase_dedup_id): uploads and simple edits give every row one,
// and delta commits keep it in the data, so an edited row keeps its key
// while its content id (a hash of the data) changes. Rows without one are
// matched by content id, so an edit of such a row shows as removed + added.

export interface Row {
  id: string;
  data: Record<string, unknown>;
}

export interface ChangedRow {
  key: string;
  before: Row;
  after: Row;
  columns: string[]; // the data keys whose values differ
}

export interface RevisionDiff {
  added: Row[];
  removed: Row[];
  changed: ChangedRow[];
  unchanged: number;
}

const DEDUP = "testcase_dedup_id";

function keyOf(r: Row): string {
  const d = r.data?.[DEDUP];
  return typeof d === "string" && d !== "" ? "d:" + d : "i:" + r.id;
}

export function diffRevisions(before: Row[], after: Row[]): RevisionDiff {
  const old = new Map<string, Row[]>();
  for (const r of before) {
    const k = keyOf(r);
    const l = old.get(k);
    if (l) l.push(r);
    else old.set(k, [r]);
  }
  const added: Row[] = [];
  const changed: ChangedRow[] = [];
  let unchanged = 0;
  for (const r of after) {
    const k = keyOf(r);
    const l = old.get(k);
    const prev = l?.shift();
    if (!prev) {
      added.push(r);
      continue;
    }
    if (l && l.length === 0) old.delete(k);
    if (prev.id === r.id) {
      unchanged++;
      continue;
    }
    const cols = new Set([...Object.keys(prev.data ?? {}), ...Object.keys(r.data ?? {})]);
    const columns = [...cols].filter((c) => c !== DEDUP && JSON.stringify(prev.data?.[c]) !== JSON.stringify(r.data?.[c]));
    if (columns.length === 0) unchanged++;
    else changed.push({ key: k.slice(2), before: prev, after: r, columns });
  }
  const removed: Row[] = [];
  for (const l of old.values()) removed.push(...l);
  return { added, removed, changed, unchanged };
}
