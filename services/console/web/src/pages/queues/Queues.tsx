import { Link } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { queuesApi } from "../../api/queues";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";

export default function Queues() {
  const { session } = useAuth();
  const q = useQuery({ queryKey: ["queues"], queryFn: queuesApi.list });
  const list = q.data?.queues ?? [];
  const me = session?.user.id;
  return (
    <section>
      <h1>Annotation queues</h1>
      <ErrorBox error={q.error} />
      <table className="grid" data-testid="queues">
        <thead>
          <tr>
            <th>Name</th>
            <th>Kind</th>
            <th>Status</th>
            <th>Assigned to you</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          {list.map((x) => {
            const assigned = (x.data.assignments ?? []).some((us) => us.includes(me ?? ""));
            const open = !(x.data.assignments ?? []).length;
            return (
              <tr key={x.id}>
                <td>
                  <Link to={`/queues/${x.id}`}>{x.name || x.id.slice(0, 8)}</Link>
                </td>
                <td>{x.data.kind}</td>
                <td>{x.status}</td>
                <td>{assigned ? "yes" : open ? "open to all" : "no"}</td>
                <td>{x.created_at ? new Date(x.created_at).toLocaleString() : ""}</td>
              </tr>
            );
          })}
          {q.isSuccess && list.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">
                No queue yet: queues are created with POST /api/simple/queues or by an evaluation with a human evaluator.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
