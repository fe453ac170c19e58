import { useMemo, useRef, useState, useEffect, type CSSProperties } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { figures, fmtDuration } from "../../api/tracing";
import { flattenTree, type SpanTree } from "../../lib/spanTree";

const ROW = 26;

/** Where a bar's duration goes: after the bar, else before it, else inside it. */
function durLabel(left: number, width: number): CSSProperties {
  if (left + width <= 85) return { left: `${left + width}%` };
  if (left >= 15) return { right: `${100 - left}%`, paddingRight: 4 };
  return { left: `${left}%`, color: "#fff" };
}

/** The span tree and its waterfall timeline side by side, one virtualised list. */
export function Waterfall({
  tree,
  selected,
  onSelect,
  since,
}: {
  tree: SpanTree;
  selected?: string;
  onSelect: (id: string) => void;
  /** performance.now() when the spans arrived: the time to the first paint of this tree
   * is written to data-render-ms. */
  since?: number;
}) {
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const rows = useMemo(() => flattenTree(tree, collapsed), [tree, collapsed]);
  const parent = useRef<HTMLDivElement>(null);
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW,
    overscan: 20,
    initialRect: { width: 800, height: 600 },
  });
  const total = Math.max(tree.end - tree.start, 0.001);
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const n = new Set(c);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  // Keyboard: up/down move the selection along the visible rows.
  useEffect(() => {
    if (selected) {
      const i = rows.findIndex((r) => r.span.span_id === selected);
      if (i >= 0) virt.scrollToIndex(i, { align: "auto" });
    }
    // Only when the selection changes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [selected]);

  useEffect(() => {
    if (since === undefined) return;
    const id = requestAnimationFrame(() => {
      // The frame after the commit: the rows are painted.
      if (parent.current) parent.current.dataset.renderMs = (performance.now() - since).toFixed(1);
    });
    return () => cancelAnimationFrame(id);
  }, [tree, since]);

  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div className="waterfall">
      <div className="waterfall-head">
        <div className="wf-name">Span ({tree.count})</div>
        <div className="wf-bar-col">
          {ticks.map((t) => (
            <span key={t} className="wf-tick" style={{ left: `${t * 100}%` }}>
              {fmtDuration(t * total)}
            </span>
          ))}
        </div>
      </div>
      <div
        ref={parent}
        className="waterfall-body"
        role="tree"
        aria-label="Span tree"
        tabIndex={0}
        data-testid="span-tree"
        data-rows={rows.length}
        onKeyDown={(e) => {
          const i = rows.findIndex((r) => r.span.span_id === selected);
          if (e.key === "ArrowDown" && i < rows.length - 1) {
            e.preventDefault();
            onSelect(rows[i + 1].span.span_id);
          } else if (e.key === "ArrowUp" && i > 0) {
            e.preventDefault();
            onSelect(rows[i - 1].span.span_id);
          } else if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && selected) {
            const isCollapsed = collapsed.has(selected);
            if ((e.key === "ArrowLeft") !== isCollapsed) toggle(selected);
          }
        }}
      >
        <div style={{ height: virt.getTotalSize(), position: "relative" }}>
          {virt.getVirtualItems().map((vi) => {
            const n = rows[vi.index];
            const id = n.span.span_id;
            const left = ((n.start - tree.start) / total) * 100;
            const width = Math.max(((n.end - n.start) / total) * 100, 0.3);
            const err = n.span.status_code === "STATUS_CODE_ERROR";
            return (
              <div
                key={id}
                role="treeitem"
                aria-selected={id === selected}
                aria-level={n.depth + 1}
                aria-expanded={n.children.length ? !collapsed.has(id) : undefined}
                className={`wf-row${id === selected ? " selected" : ""}${err ? " error" : ""}`}
                style={{ transform: `translateY(${vi.start}px)`, height: ROW }}
                data-span={id}
                onClick={() => onSelect(id)}
              >
                <div className="wf-name" style={{ paddingLeft: 6 + n.depth * 14 }}>
                  {n.children.length > 0 ? (
                    <button
                      type="button"
                      className="wf-toggle"
                      aria-label={collapsed.has(id) ? "Expand" : "Collapse"}
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(id);
                      }}
                    >
                      {collapsed.has(id) ? "▸" : "▾"}
                    </button>
                  ) : (
                    <span className="wf-toggle-pad" />
                  )}
                  <span className={`type-dot t-${n.span.span_type ?? "task"}`} />
                  <span className="wf-label">{n.span.span_name}</span>
                </div>
                <div className="wf-bar-col">
                  <div className={`wf-bar t-${n.span.span_type ?? "task"}`} style={{ left: `${left}%`, width: `${width}%` }} />
                  <span className="wf-dur" style={durLabel(left, width)}>
                    {fmtDuration(figures(n.span).durationMs)}
                  </span>
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
