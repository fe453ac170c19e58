import type { Span } from "../api/tracing";

// Builds the tree of a trace from its flat spans, in O(n log n): children sorted by
// start time, spans whose parent is missing (or that form a cycle) shown as roots, as the
// tracing service does. The rows are the depth-first order the tree and the waterfall
// draw, so a 2,000-span trace is one array the virtual list windows over.

export interface SpanNode {
  span: Span;
  depth: number;
  children: SpanNode[];
  /** Start and end in ms since the epoch. */
  start: number;
  end: number;
}

export interface SpanTree {
  roots: SpanNode[];
  byId: Map<string, SpanNode>;
  /** Earliest start and latest end of the trace, in ms. */
  start: number;
  end: number;
  count: number;
}

function ms(t: string | undefined): number {
  if (!t) return NaN;
  const v = Date.parse(t.endsWith("Z") || /[+-]\d\d:?\d\d$/.test(t) ? t : t + "Z");
  return v;
}

export function buildSpanTree(spans: Span[]): SpanTree {
  const byId = new Map<string, SpanNode>();
  for (const s of spans) {
    if (byId.has(s.span_id)) continue; // a duplicate id: the first one wins
    let start = ms(s.start_time);
    let end = ms(s.end_time);
    if (Number.isNaN(start)) start = end;
    if (Number.isNaN(end) || end < start) end = start;
    byId.set(s.span_id, { span: s, depth: 0, children: [], start, end });
  }
  const roots: SpanNode[] = [];
  for (const n of byId.values()) {
    const pid = n.span.parent_id;
    const parent = pid && pid !== n.span.span_id ? byId.get(pid) : undefined;
    if (parent) parent.children.push(n);
    else roots.push(n);
  }
  const byStart = (a: SpanNode, b: SpanNode) => a.start - b.start || a.span.span_id.localeCompare(b.span.span_id);
  // Depths, iteratively (deep traces must not overflow the stack), and cycle breaking:
  // a node not reached from a root sits in a cycle and becomes a root itself.
  const reached = new Set<string>();
  const walk = (from: SpanNode[]) => {
    const stack: SpanNode[] = [...from];
    for (const r of from) r.depth = 0;
    while (stack.length) {
      const n = stack.pop()!;
      if (reached.has(n.span.span_id)) continue;
      reached.add(n.span.span_id);
      n.children.sort(byStart);
      for (const c of n.children) {
        c.depth = n.depth + 1;
        stack.push(c);
      }
    }
  };
  walk(roots);
  if (reached.size < byId.size) {
    for (const n of byId.values()) {
      if (!reached.has(n.span.span_id)) {
        // Cut the cycle at this node: drop it from its parent's children.
        const p = n.span.parent_id ? byId.get(n.span.parent_id) : undefined;
        if (p) p.children = p.children.filter((c) => c !== n);
        roots.push(n);
        walk([n]);
      }
    }
  }
  roots.sort(byStart);
  let start = Infinity;
  let end = -Infinity;
  for (const n of byId.values()) {
    if (n.start < start) start = n.start;
    if (n.end > end) end = n.end;
  }
  if (!Number.isFinite(start)) start = end = 0;
  return { roots, byId, start, end, count: byId.size };
}

/** The visible rows in depth-first order, skipping the children of collapsed spans. */
export function flattenTree(tree: SpanTree, collapsed: ReadonlySet<string> = new Set()): SpanNode[] {
  const out: SpanNode[] = [];
  const stack: SpanNode[] = [...tree.roots].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    if (!collapsed.has(n.span.span_id)) {
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    }
  }
  return out;
}
