import { useState } from "react";
import { useInfiniteQuery } from "@tanstack/react-query";
import { auditList } from "../../api/settings";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";
import { TimeRange, rangeMs } from "../../components/TimeRange";
import { SettingsNav } from "./SettingsNav";

export default function Audit() {
  const { project } = useAuth();
  const [range, setRange] = useState("7d");
  const [action, setAction] = useState("");
  const [actor, setActor] = useState("");
  const [applied, setApplied] = useState({ action: "", actor: "" });
  const q = useInfiniteQuery({
    queryKey: ["audit", project?.id, range, applied],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      auditList({
        since: new Date(Date.now() - rangeMs(range)).toISOString(),
        action: applied.action || undefined,
        actor: applied.actor || undefined,
        limit: "100",
        cursor: pageParam,
      }),
    getNextPageParam: (p) => p.next || undefined,
  });
  const entries = q.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>Audit log</h2>
      <form
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ action, actor });
        }}
      >
        <TimeRange value={range} onChange={setRange} />
        <input aria-label="Action" placeholder="action, e.g. POST /keys" value={action} onChange={(e) => setAction(e.target.value)} />
        <input aria-label="Actor" placeholder="actor user id" value={actor} onChange={(e) => setActor(e.target.value)} />
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={q.error} />
      <table className="grid" data-testid="audit">
        <thead>
          <tr>
            <th>When</th>
            <th>Action</th>
            <th>Target</th>
            <th>Actor</th>
            <th>Via</th>
            <th>Status</th>
            <th>Request</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td>{new Date(e.at).toLocaleString()}</td>
              <td className="mono">{e.action}</td>
              <td className="mono">
                {Object.entries(e.target ?? {})
                  .map(([k, v]) => `${k}=${v}`)
                  .join(" ")}
              </td>
              <td className="mono">{e.actor_user_id?.slice(0, 8) ?? "—"}</td>
              <td>{e.actor_key_id ? `key ${e.actor_key_id.slice(0, 8)}` : e.session_id ? "console" : "—"}</td>
              <td>{e.status}</td>
              <td className="mono">{e.request_id}</td>
            </tr>
          ))}
          {q.isSuccess && entries.length === 0 && (
            <tr>
              <td colSpan={7} className="muted">
                Nothing recorded in this range.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {q.hasNextPage && (
        <button type="button" onClick={() => void q.fetchNextPage()} disabled={q.isFetchingNextPage}>
          Older entries
        </button>
      )}
    </section>
  );
}
