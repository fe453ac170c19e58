import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { querySessions } from "../../api/tracing";
import { ErrorBox } from "../../components/ErrorBox";
import { TimeRange, rangeMs } from "../../components/TimeRange";
import { TrafficSwitch } from "../../components/TrafficSwitch";
import { PRODUCTION, showsAllTraffic } from "../../lib/traffic";

// Every runtime call opens a session, an evaluation's too: by default the
// sessions of production calls only (their root spans carry the session).
const PRODUCTION_SESSIONS = { operator: "and" as const, conditions: [{ field: "parent_id", operator: "is" as const, value: null }, ...PRODUCTION] };

export default function Sessions() {
  const [range, setRange] = useState("7d");
  const [realtime, setRealtime] = useState(true);
  const [params] = useSearchParams();
  const all = showsAllTraffic(params);
  const q = useQuery({
    queryKey: ["sessions", range, realtime, all],
    queryFn: () =>
      querySessions({ oldest: new Date(Date.now() - rangeMs(range)).toISOString(), limit: 200, order: "descending" }, realtime, all ? undefined : PRODUCTION_SESSIONS),
  });
  const ids = q.data?.session_ids ?? [];
  return (
    <section>
      <h1>Sessions</h1>
      <div className="toolbar">
        <TimeRange value={range} onChange={setRange} />
        <label className="inline">
          <input type="checkbox" checked={realtime} onChange={(e) => setRealtime(e.target.checked)} /> by last activity
        </label>
        <TrafficSwitch />
      </div>
      <ErrorBox error={q.error} />
      {q.isSuccess && ids.length === 0 && (
        <p className="muted">No {all ? "" : "production "}session in this range: spans carry one in ag.session.id.</p>
      )}
      <ul className="session-list">
        {ids.map((id) => (
          <li key={id}>
            <Link to={`/sessions/${encodeURIComponent(id)}`} className="mono">
              {id}
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
