import { useMemo, useRef } from "react";
import { Link } from "react-router";
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { figures, fmtCost, fmtDuration, type Span } from "../../api/tracing";

export function StatusBadge({ code }: { code?: string }) {
  if (code === "STATUS_CODE_ERROR") return <span className="badge error">error</span>;
  if (code === "STATUS_CODE_OK") return <span className="badge ok">ok</span>;
  return <span className="badge">unset</span>;
}

const ROW_HEIGHT = 34;

/** The list of traces (root spans) or spans: virtualised, so a long live tail stays smooth. */
export function SpanTable({
  spans,
  onEnd,
  selected,
  onSelect,
}: {
  spans: Span[];
  onEnd?: () => void;
  /** With onSelect, a first column of checkboxes selects traces (by trace id). */
  selected?: Set<string>;
  onSelect?: (traceId: string, on: boolean) => void;
}) {
  const columns = useMemo<ColumnDef<Span>[]>(
    () => [
      ...(onSelect
        ? [
            {
              header: "",
              id: "select",
              cell: ({ row }) => (
                <input
                  type="checkbox"
                  aria-label={`Select ${row.original.span_name} (${row.original.trace_id.slice(0, 8)})`}
                  data-select-trace={row.original.trace_id}
                  checked={selected?.has(row.original.trace_id) ?? false}
                  onChange={(e) => onSelect(row.original.trace_id, e.target.checked)}
                />
              ),
            } as ColumnDef<Span>,
          ]
        : []),
      {
        header: "Name",
        id: "name",
        cell: ({ row }) => (
          <Link to={`/traces/${row.original.trace_id}${row.original.parent_id ? `?span=${row.original.span_id}` : ""}`} className="span-link">
            {row.original.span_name}
          </Link>
        ),
      },
      { header: "Type", id: "type", cell: ({ row }) => <span className="badge">{row.original.span_type ?? "task"}</span> },
      { header: "Start", id: "start", cell: ({ row }) => <span className="mono">{new Date(row.original.start_time).toLocaleString()}</span> },
      { header: "Duration", id: "duration", cell: ({ row }) => fmtDuration(figures(row.original).durationMs) },
      { header: "Tokens", id: "tokens", cell: ({ row }) => figures(row.original).tokens ?? "—" },
      {
        header: "Cost",
        id: "cost",
        cell: ({ row }) => {
          const f = figures(row.original);
          return f.cost === undefined && f.unpricedModel ? (
            <span className="muted" title={`no price for model ${f.unpricedModel}`}>no price</span>
          ) : (
            fmtCost(f.cost)
          );
        },
      },
      { header: "Status", id: "status", cell: ({ row }) => <StatusBadge code={row.original.status_code} /> },
      {
        header: "Session",
        id: "session",
        cell: ({ row }) =>
          row.original.session_id ? (
            <Link to={`/sessions/${encodeURIComponent(row.original.session_id)}`} className="mono">
              {row.original.session_id.slice(0, 12)}
            </Link>
          ) : (
            ""
          ),
      },
    ],
    [selected, onSelect],
  );
  const table = useReactTable({ data: spans, columns, getCoreRowModel: getCoreRowModel(), getRowId: (s) => s.trace_id + s.span_id });
  const parent = useRef<HTMLDivElement>(null);
  const rows = table.getRowModel().rows;
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    initialRect: { width: 1000, height: 600 },
  });
  const items = virt.getVirtualItems();
  const last = items[items.length - 1];
  if (onEnd && last && last.index >= rows.length - 5) queueMicrotask(onEnd);
  const padTop = items.length ? items[0].start : 0;
  const padBottom = items.length ? virt.getTotalSize() - items[items.length - 1].end : 0;
  return (
    <div ref={parent} className="table-scroll" data-testid="span-table">
      <table className="grid">
        <thead>
          {table.getHeaderGroups().map((hg) => (
            <tr key={hg.id}>
              {hg.headers.map((h) => (
                <th key={h.id}>{flexRender(h.column.columnDef.header, h.getContext())}</th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {padTop > 0 && (
            <tr style={{ height: padTop }}>
              <td colSpan={columns.length} />
            </tr>
          )}
          {items.map((vi) => {
            const row = rows[vi.index];
            return (
              <tr key={row.id} style={{ height: ROW_HEIGHT }} data-trace={row.original.trace_id}>
                {row.getVisibleCells().map((c) => (
                  <td key={c.id}>{flexRender(c.column.columnDef.cell, c.getContext())}</td>
                ))}
              </tr>
            );
          })}
          {padBottom > 0 && (
            <tr style={{ height: padBottom }}>
              <td colSpan={columns.length} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
