import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { diffRevisions } from "./diff";
import { DiffTables } from "./DiffView";
import { startWork, editCell, addRow, removeRows, addColumn, renameColumn, removeColumn, toDelta } from "./edit";

afterEach(cleanup);

const row = (id: string, dedup: string | undefined, data: Record<string, unknown>) => ({
  id,
  data: dedup ? { ...data, testcase_dedup_id: dedup } : data,
});

describe("revision diff", () => {
  const before = [
    row("id-1", "d1", { q: "2+2", a: "4" }),
    row("id-2", "d2", { q: "capital of France", a: "Paris" }),
    row("id-3", "d3", { q: "3*3", a: "9" }),
    row("id-x", undefined, { q: "no dedup", a: "x" }),
  ];
  const after = [
    row("id-1", "d1", { q: "2+2", a: "4" }), // unchanged
    row("id-2b", "d2", { q: "capital of France", a: "Paris, France" }), // changed: new content id, same dedup id
    row("id-4", "d4", { q: "new", a: "row" }), // added
    row("id-x", undefined, { q: "no dedup", a: "x" }), // unchanged, matched by id
  ];

  it("finds rows added, removed and changed", () => {
    const d = diffRevisions(before, after);
    expect(d.added.map((r) => r.id)).toEqual(["id-4"]);
    expect(d.removed.map((r) => r.id)).toEqual(["id-3"]);
    expect(d.changed).toHaveLength(1);
    expect(d.changed[0]).toMatchObject({ key: "d2", columns: ["a"] });
    expect(d.unchanged).toBe(2);
  });

  it("keeps duplicate rows apart", () => {
    const dup = [row("same", undefined, { q: "x" }), row("same", undefined, { q: "x" })];
    const d = diffRevisions(dup, dup.slice(0, 1));
    expect(d.removed).toHaveLength(1);
    expect(d.unchanged).toBe(1);
  });

  it("renders the three lists", () => {
    render(<DiffTables diff={diffRevisions(before, after)} />);
    expect(screen.getByTestId("diff-summary")).toHaveTextContent("1 added, 1 removed, 1 changed, 2 unchanged");
    expect(screen.getByTestId("diff-added")).toHaveTextContent("new");
    expect(screen.getByTestId("diff-removed")).toHaveTextContent("3*3");
    const changed = screen.getByTestId("diff-changed");
    expect(changed).toHaveTextContent("Paris, France");
    expect(changed).not.toHaveTextContent("testcase_dedup_id");
  });
});

describe("revision diff by row identity", () => {
  // 42 rows; the next revision adds an empty column "notes" to every row
  // and fills it on row 5 only, and changes one answer.
  const before = Array.from({ length: 42 }, (_, i) => row(`b${i}`, `d${i}`, { country: `Country ${i}`, answer: `Capital ${i}` }));
  const after = before.map((r, i) => {
    const data: Record<string, unknown> = { ...r.data, notes: i === 5 ? "check" : "" };
    if (i === 3) data.answer = "Capital three";
    return { id: `a${i}`, data };
  });

  it("reports an added column once, not as a change of every row", () => {
    const d = diffRevisions(before, after);
    expect(d.columnsAdded).toEqual(["notes"]);
    expect(d.columnsRemoved).toEqual([]);
    expect(d.added).toHaveLength(0);
    expect(d.removed).toHaveLength(0);
    expect(d.changed.map((c) => [c.row, c.name, c.columns])).toEqual([
      [4, "Country 3", ["answer"]],
      [6, "Country 5", ["notes"]],
    ]);
    expect(d.unchanged).toBe(40);
  });

  it("names the changed rows and the column change", () => {
    render(<DiffTables diff={diffRevisions(before, after)} />);
    expect(screen.getByTestId("diff-summary")).toHaveTextContent("1 column added (notes); 0 added, 0 removed, 2 changed, 40 unchanged rows");
    const changed = screen.getByTestId("diff-changed");
    expect(changed).toHaveTextContent("row 4 · Country 3");
    expect(changed).not.toHaveTextContent("d3");
  });

  it("a removed column that had values is a change of those rows", () => {
    const d = diffRevisions(after, before);
    expect(d.columnsRemoved).toEqual(["notes"]);
    expect(d.changed.map((c) => c.name)).toEqual(["Country 3", "Country 5"]);
  });
});

describe("edit delta", () => {
  const base = [
    { id: "t1", data: { q: "a", a: "1", testcase_dedup_id: "d1" } },
    { id: "t2", data: { q: "b", a: "2", testcase_dedup_id: "d2" } },
    { id: "t3", data: { q: "c", a: "3", testcase_dedup_id: "d3" } },
  ];

  it("is null until something changes", () => {
    const w = startWork(base);
    expect(w.columns.map((c) => c.name)).toEqual(["q", "a"]);
    expect(toDelta(w)).toBeNull();
  });

  it("turns edits into rows and columns operations", () => {
    let w = startWork(base);
    w = editCell(w, 0, "a", "one");
    w = removeRows(w, new Set([1]));
    w = addRow(w);
    w = editCell(w, 1, "q", "d"); // t3: t2 is gone
    w = editCell(w, 2, "q", "new"); // the added row
    w = addColumn(w, "note");
    w = renameColumn(w, "a", "answer");
    const d = toDelta(w)!;
    expect(d.rows?.remove).toEqual(["t2"]);
    expect(d.rows?.replace?.map((r) => r.id)).toEqual(["t1", "t3"]);
    expect(d.rows?.replace?.[0].data).toEqual({ q: "a", answer: "one", testcase_dedup_id: "d1", note: "" });
    expect(d.rows?.add).toEqual([{ data: { q: "new", answer: "", note: "" } }]);
    expect(d.columns).toEqual({ add: ["note"], remove: [], replace: [["a", "answer"]] });
  });

  it("removes a base column", () => {
    const d = toDelta(removeColumn(startWork(base), "a"))!;
    expect(d.columns?.remove).toEqual(["a"]);
    expect(d.rows).toBeUndefined();
  });
});
