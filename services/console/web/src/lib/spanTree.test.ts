import { describe, expect, it } from "vitest";
import type { Span } from "../api/tracing";
import { buildSpanTree, flattenTree } from "./spanTree";

const T0 = Date.parse("2026-11-26T08:00:00Z");
const hex = (n: number) => n.toString(16).padStart(16, "0");

function span(id: number, parent: number | null, startMs: number, durMs: number): Span {
  return {
    trace_id: "a".repeat(32),
    span_id: hex(id),
    parent_id: parent === null ? undefined : hex(parent),
    span_name: `s${id}`,
    start_time: new Date(T0 + startMs).toISOString(),
    end_time: new Date(T0 + startMs + durMs).toISOString(),
  };
}

describe("span tree", () => {
  it("builds 2,000 spans into one tree in depth-first, start-time order", () => {
    // A root with 20 children, each with 99 grandchildren (1 + 20 + 1,980 = 2,001 → take 2,000),
    // given in reverse order so the builder must sort.
    const spans: Span[] = [span(1, null, 0, 10_000)];
    let id = 2;
    for (let c = 0; c < 20; c++) {
      const cid = id++;
      spans.push(span(cid, 1, c * 400, 390));
      for (let g = 0; g < 99 && spans.length < 2000; g++) spans.push(span(id++, cid, c * 400 + g * 3, 2));
    }
    expect(spans.length).toBe(2000);
    const t0 = performance.now();
    const tree = buildSpanTree([...spans].reverse());
    const rows = flattenTree(tree);
    const took = performance.now() - t0;
    expect(tree.count).toBe(2000);
    expect(tree.roots).toHaveLength(1);
    expect(rows).toHaveLength(2000);
    expect(rows[0].span.span_id).toBe(hex(1));
    expect(rows[0].depth).toBe(0);
    expect(rows[1].span.span_id).toBe(hex(2)); // first child
    expect(rows[1].depth).toBe(1);
    expect(rows[2].depth).toBe(2); // its first grandchild
    expect(rows[2].span.parent_id).toBe(hex(2));
    // Every span comes after its parent, and siblings in start order.
    const pos = new Map(rows.map((r, i) => [r.span.span_id, i]));
    for (const r of rows) {
      if (r.span.parent_id) expect(pos.get(r.span.parent_id)!).toBeLessThan(pos.get(r.span.span_id)!);
      for (let i = 1; i < r.children.length; i++) expect(r.children[i - 1].start).toBeLessThanOrEqual(r.children[i].start);
    }
    expect(tree.start).toBe(T0);
    expect(tree.end).toBe(T0 + 10_000);
    expect(took).toBeLessThan(500);
  });

  it("hides the children of collapsed spans", () => {
    const tree = buildSpanTree([span(1, null, 0, 100), span(2, 1, 1, 10), span(3, 2, 2, 1), span(4, 1, 20, 10)]);
    expect(flattenTree(tree).map((r) => r.span.span_name)).toEqual(["s1", "s2", "s3", "s4"]);
    expect(flattenTree(tree, new Set([hex(2)])).map((r) => r.span.span_name)).toEqual(["s1", "s2", "s4"]);
  });

  it("shows orphans and cycles as roots and keeps the first of duplicate ids", () => {
    const tree = buildSpanTree([
      span(1, null, 0, 100),
      span(2, 99, 5, 10), // parent missing
      span(3, 4, 6, 1), // 3 ↔ 4 cycle
      span(4, 3, 7, 1),
      { ...span(1, null, 50, 1), span_name: "dup" },
    ]);
    expect(tree.count).toBe(4);
    const rows = flattenTree(tree);
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => r.span.span_name)).toContain("s2");
    expect(rows.find((r) => r.span.span_name === "s2")!.depth).toBe(0);
    expect(rows.map((r) => r.span.span_name)).not.toContain("dup");
  });
});
