// RunFigures: a playground run's latency, tokens and cost, read from its
// trace (the invoke answer carries only the outputs and the trace id).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { figures, fmtCost, fmtDuration, traceSpans, type Span } from "../../api/tracing";

/** The root span of a trace: the one without a parent (else the first). */
function rootOf(spans: Span[] | undefined): Span | undefined {
  return spans?.find((s) => !s.parent_id) ?? spans?.[0];
}

// The tracing service stores a trace a moment after the answer ends: poll
// it this often, this many times, before saying the figures are missing.
const POLL_MS = 500;
const POLLS = 40;

export function RunFigures({ traceId, elapsedMs }: { traceId?: string; elapsedMs?: number }) {
  const qc = useQueryClient();
  const key = ["playground-trace", traceId];
  const q = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => traceSpans([traceId!], signal),
    enabled: !!traceId,
    refetchInterval: (query) => {
      const done = rootOf(query.state.data?.spans);
      return done || query.state.dataUpdateCount >= POLLS ? false : POLL_MS;
    },
  });
  if (!traceId && elapsedMs === undefined) return null;
  const root = rootOf(q.data?.spans);
  const f = root ? figures(root) : undefined;
  const polls = qc.getQueryState(key)?.dataUpdateCount ?? 0;
  const waiting = !!traceId && !root && !q.isError && polls < POLLS;
  const tokens = f?.tokens;
  const pending = waiting ? "…" : "—";
  // The trace's figures are the run's own (the runtime's span); the round
  // trip adds the network and the stream as this browser saw them.
  return (
    <p className="muted" data-testid="pane-figures" style={{ margin: "4px 0" }}>
      latency {f ? fmtDuration(f.durationMs) : pending}
      {" · "}
      {tokens !== undefined ? `${tokens} token${tokens === 1 ? "" : "s"}` : `tokens ${f ? "—" : pending}`}
      {" · "}
      cost {f ? (f.cost === undefined && f.unpricedModel ? `unknown (no price for ${f.unpricedModel})` : fmtCost(f.cost)) : pending}
      {elapsedMs !== undefined && ` · round trip ${fmtDuration(elapsedMs)}`}
    </p>
  );
}
