// The testset grid: every row of a revision, virtualised with a fixed row
// height so 100,000 rows render only the window in view (plus overscan)
// and scroll at frame rate. Cells are edited in place (double-click or
// Enter); rows are selected with their checkbox.
import { useRef, useState, type KeyboardEvent } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import "./Grid.css";

export const ROW_HEIGHT = 32;
const COL_WIDTH = 200;

/** numWidth is the width of the "#" column: enough for the checkbox and
 * the largest row number (a fixed 72 px cut "1,200" off). */
export function numWidth(rows: number, editable?: boolean): number {
  const digits = String(Math.max(1, rows)).length;
  return (editable ? 44 : 20) + 10 * digits;
}

export interface GridProps {
  columns: string[];
  rows: Record<string, unknown>[];
  height?: number;
  editable?: boolean;
  selected?: Set<number>;
  onToggle?: (row: number) => void;
  onEdit?: (row: number, column: string, value: string) => void;
  /** marks per row: "added" | "changed" (shown as a left border colour). */
  marks?: Map<number, "added" | "changed">;
  /** for tests: the initial viewport size when layout is not measured. */
  initialRect?: { width: number; height: number };
}

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

export function Grid({ columns, rows, height = 560, editable, selected, onToggle, onEdit, marks, initialRect }: GridProps) {
  const parent = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    initialRect,
  });
  const [editing, setEditing] = useState<{ row: number; col: string } | null>(null);
  const num = numWidth(rows.length, editable);
  const width = num + columns.length * COL_WIDTH;

  const commit = (row: number, col: string, value: string) => {
    setEditing(null);
    if (cellText(rows[row]?.[col]) !== value) onEdit?.(row, col, value);
  };

  const items = v.getVirtualItems();
  const slots = Math.max(1, items.length);
  return (
    <div
      className="tsgrid"
      role="grid"
      aria-rowcount={rows.length + 1}
      data-testid="testset-grid"
      style={{ border: "1px solid #ddd", ["--tsg-num" as string]: `${num}px` }}
    >
      <div ref={parent} data-testid="grid-scroller" className="tsg-scroller" style={{ height: Math.min(height, (rows.length + 1) * ROW_HEIGHT + 2) }}>
        <div role="row" className="tsg-head" style={{ width }}>
          <div className="tsg-cell tsg-num">#</div>
          {columns.map((c) => (
            <div key={c} role="columnheader" className="tsg-cell" title={c}>
              {c}
            </div>
          ))}
        </div>
        <div style={{ height: v.getTotalSize(), width, position: "relative" }}>
          {items.map((it) => {
            const r = rows[it.index];
            const mark = marks?.get(it.index);
            const sel = selected?.has(it.index);
            return (
              <div
                key={it.index % slots}
                role="row"
                aria-rowindex={it.index + 2}
                data-row={it.index}
                className={`tsg-row${mark ? " " + mark : ""}${sel ? " selected" : ""}`}
                style={{ width, transform: `translateY(${it.start}px)` }}
              >
                <div className="tsg-cell tsg-num">
                  {editable && <input type="checkbox" aria-label={`select row ${it.index + 1}`} checked={sel ?? false} onChange={() => onToggle?.(it.index)} />}{" "}
                  {it.index + 1}
                </div>
                {columns.map((c) =>
                  editing && editing.row === it.index && editing.col === c ? (
                    <input
                      key={c}
                      autoFocus
                      onFocus={(e) => e.currentTarget.select()}
                      aria-label={`edit ${c} of row ${it.index + 1}`}
                      defaultValue={cellText(r?.[c])}
                      className="tsg-cell"
                      onBlur={(e) => commit(it.index, c, e.currentTarget.value)}
                      onKeyDown={(e: KeyboardEvent<HTMLInputElement>) => {
                        if (e.key === "Enter") commit(it.index, c, e.currentTarget.value);
                        if (e.key === "Escape") setEditing(null);
                      }}
                    />
                  ) : (
                    <div
                      key={c}
                      role="gridcell"
                      tabIndex={editable ? 0 : -1}
                      className="tsg-cell"
                      title={cellText(r?.[c])}
                      onDoubleClick={() => editable && setEditing({ row: it.index, col: c })}
                      onKeyDown={(e) => editable && e.key === "Enter" && setEditing({ row: it.index, col: c })}
                    >
                      {cellText(r?.[c])}
                    </div>
                  ),
                )}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
