import { useCallback, useMemo, useState } from "react";
import { useSearchParams } from "react-router";
import { useInfiniteQuery } from "@tanstack/react-query";
import { querySpans, type Span } from "../../api/tracing";
import { FilterBuilder } from "../../components/FilterBuilder";
import { ErrorBox } from "../../components/ErrorBox";
import { TimeRange, rangeMs } from "../../components/TimeRange";
import { FilterError, toFiltering, type Condition, type FilterRow } from "../../lib/filter";
import { SpanTable } from "./SpanTable";
import { TrafficSwitch } from "../../components/TrafficSwitch";
import { PRODUCTION, showsAllTraffic } from "../../lib/traffic";
import { AddToQueue } from "../../components/AddToQueue";
import { AddToTestset } from "../../components/AddToTestset";

const PAGE = 50;
const ROOTS: Condition = { field: "parent_id", operator: "is", value: null };

export default function Traces() {
  const [params, setParams] = useSearchParams();
  const range = params.get("range") ?? "24h";
  const focus = params.get("focus") === "span" ? "span" : "trace";
  // Production calls only unless the switch asks for evaluation and annotation
  // traffic too. The conditions hold for root spans, so the list of all spans
  // shows everything (a model call of an evaluation carries no mark of its own).
  const all = showsAllTraffic(params);
  const fixed = useMemo(() => (focus === "trace" ? (all ? [ROOTS] : [ROOTS, ...PRODUCTION]) : []), [focus, all]);
  const [rows, setRows] = useState<FilterRow[]>([]);
  const [combine, setCombine] = useState<"and" | "or">("and");
  // The filter applied (rows are edited freely; Apply sends them).
  const [applied, setApplied] = useState<{ rows: FilterRow[]; combine: "and" | "or" }>({ rows: [], combine: "and" });
  const [live, setLive] = useState(false);
  // Traces picked in the list, for an annotation queue.
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const pick = useCallback((id: string, on: boolean) => {
    setPicked((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  }, []);

  const built = useMemo(() => {
    try {
      return { filtering: toFiltering(applied.rows, applied.combine, fixed), errors: {} as Record<string, string> };
    } catch (e) {
      if (e instanceof FilterError) return { filtering: undefined, errors: { [e.rowId]: e.message } };
      throw e;
    }
  }, [applied, fixed]);
  const [draftErrors, setDraftErrors] = useState<Record<string, string>>({});

  const q = useInfiniteQuery({
    queryKey: ["spans", focus, range, built.filtering],
    enabled: Object.keys(built.errors).length === 0,
    initialPageParam: null as { newest: string; next: string } | null,
    queryFn: ({ pageParam, signal }) => {
      const now = Date.now();
      return querySpans(
        built.filtering,
        {
          oldest: new Date(now - rangeMs(range)).toISOString(),
          newest: pageParam?.newest ?? new Date(now + 60_000).toISOString(),
          next: pageParam?.next,
          limit: PAGE,
          order: "descending",
        },
        signal,
      );
    },
    getNextPageParam: (last) => {
      const spans = last.spans ?? [];
      if (spans.length < PAGE) return undefined;
      const s = spans[spans.length - 1];
      return { newest: s.start_time, next: s.span_id };
    },
    // Live tail: the first page is asked again every 3 s while the tail is on.
    refetchInterval: live ? 3000 : false,
  });
  const spans: Span[] = useMemo(() => q.data?.pages.flatMap((p) => p.spans ?? []) ?? [], [q.data]);

  function apply() {
    try {
      toFiltering(rows, combine);
      setDraftErrors({});
      setApplied({ rows, combine });
    } catch (e) {
      if (e instanceof FilterError) setDraftErrors({ [e.rowId]: e.message });
      else throw e;
    }
  }

  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    p.set(k, v);
    setParams(p, { replace: true });
  };

  return (
    <section className="page-traces">
      <h1>Traces</h1>
      <div className="toolbar">
        <TimeRange value={range} onChange={(v) => set("range", v)} />
        <select aria-label="Show" value={focus} onChange={(e) => set("focus", e.target.value)}>
          <option value="trace">Traces (root spans)</option>
          <option value="span">All spans</option>
        </select>
        {focus === "trace" && <TrafficSwitch />}
        <label className="inline">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} aria-label="Live tail" />
          Live tail {live && <span className="live-dot" title="polling every 3 s" />}
        </label>
        <button type="button" onClick={() => void q.refetch()} disabled={q.isFetching}>
          {q.isFetching ? "Loading…" : "Refresh"}
        </button>
      </div>
      <form
        className="card filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <FilterBuilder
          rows={rows}
          combine={combine}
          errors={draftErrors}
          onChange={(r, c) => {
            setRows(r);
            setCombine(c);
          }}
        />
        <div className="filter-actions">
          <button type="submit" className="primary">
            Apply filters
          </button>
          {applied.rows.length > 0 && <span className="muted">{applied.rows.length} filter(s) applied</span>}
        </div>
      </form>
      <ErrorBox error={q.error} />
      <p className="muted" data-testid="trace-count" data-state={q.isFetching ? "loading" : "ready"}>
        {spans.length} {focus === "trace" ? (all ? "traces" : "production traces") : "spans"}
        {q.hasNextPage ? "+" : ""}
      </p>
      {focus === "trace" && picked.size > 0 && (
        <div className="toolbar card" data-testid="selection">
          <strong>{picked.size === 1 ? "1 trace selected" : `${picked.size} traces selected`}</strong>
          <AddToQueue traceIds={[...picked]} label="Add to queue" />
          <AddToTestset traceIds={[...picked]} />
          <button type="button" className="link" onClick={() => setPicked(new Set())}>
            Clear selection
          </button>
        </div>
      )}
      <SpanTable
        spans={spans}
        selected={focus === "trace" ? picked : undefined}
        onSelect={focus === "trace" ? pick : undefined}
        onEnd={q.hasNextPage && !q.isFetchingNextPage ? () => void q.fetchNextPage() : undefined} />
    </section>
  );
}
