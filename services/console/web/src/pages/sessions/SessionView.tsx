import { Link, useParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { ag, figures, fmtCost, fmtDuration, querySpans } from "../../api/tracing";
import { ErrorBox } from "../../components/ErrorBox";
import { DataView } from "../../components/Conversation";
import { StatusBadge } from "../traces/SpanTable";

/** Every trace of one ag.session.id, oldest first, as a thread: each turn's input and
 * output, linked to its trace. */
export default function SessionView() {
  const { sessionId = "" } = useParams();
  const q = useQuery({
    queryKey: ["session", sessionId],
    queryFn: () =>
      querySpans(
        {
          operator: "and",
          conditions: [
            { field: "session_id", operator: "is", value: sessionId },
            { field: "parent_id", operator: "is", value: null },
          ],
        },
        { oldest: new Date(Date.now() - 90 * 86_400_000).toISOString(), newest: new Date(Date.now() + 60_000).toISOString(), limit: 500, order: "ascending" },
      ),
  });
  const turns = q.data?.spans ?? [];
  return (
    <section className="page-session">
      <div className="crumbs">
        <Link to="/sessions">Sessions</Link> / <span className="mono">{sessionId}</span>
      </div>
      <h1>Session</h1>
      <ErrorBox error={q.error} />
      {q.isSuccess && turns.length === 0 && <p className="muted">No trace carries this session id in the last 90 days.</p>}
      <ol className="thread" data-testid="session-thread">
        {turns.map((s) => {
          const d = (ag(s).data ?? {}) as Record<string, unknown>;
          const f = figures(s);
          return (
            <li key={s.trace_id} className="turn card">
              <div className="turn-head">
                <Link to={`/traces/${s.trace_id}`}>{s.span_name}</Link>
                <StatusBadge code={s.status_code} />
                <span className="muted">{new Date(s.start_time).toLocaleString()}</span>
                <span>{fmtDuration(f.durationMs)}</span>
                <span>{f.tokens ?? "—"} tokens</span>
                <span>{fmtCost(f.cost)}</span>
              </div>
              <div className="turn-body">
                <div>
                  <div className="muted">input</div>
                  <DataView value={d.inputs} />
                </div>
                <div>
                  <div className="muted">output</div>
                  <DataView value={d.outputs} />
                </div>
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
