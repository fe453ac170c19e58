import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { queuesApi, type SimpleQueue } from "../../api/queues";
import { headRevisionId, listEvaluators } from "../../api/evaluators";
import { useAuth } from "../../auth/AuthContext";
import { Denied, usePermissions } from "../../auth/permissions";
import { ErrorBox } from "../../components/ErrorBox";

export default function Queues() {
  const { session } = useAuth();
  const q = useQuery({ queryKey: ["queues"], queryFn: queuesApi.list });
  const list = q.data?.queues ?? [];
  const me = session?.user.id;
  return (
    <section>
      <h1>Annotation queues</h1>
      <NewQueue />
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
                No queue yet: create one above, or run an evaluation with a human evaluator.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}

/**
 * A queue over traces (POST /api/simple/queues): a name and the evaluators
 * people fill in for each trace (sent as a list, so each is a human step).
 * Traces are added from the trace list or a trace.
 */
function NewQueue() {
  const qc = useQueryClient();
  const perms = usePermissions();
  const evs = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>([]);
  const [made, setMade] = useState<SimpleQueue | null>(null);
  const create = useMutation({
    mutationFn: async () => {
      // A queue pins evaluator revisions: each chosen evaluator's latest.
      const revs = await Promise.all(chosen.map(async (id) => (await headRevisionId(id)) ?? id));
      return queuesApi.create({ name: name.trim(), data: { kind: "traces", evaluators: revs } });
    },
    onSuccess: (r) => {
      setMade(r.queue ?? null);
      setName("");
      setChosen([]);
      void qc.invalidateQueries({ queryKey: ["queues"] });
    },
  });
  if (!perms.can("run_evaluation")) return <Denied perm="run_evaluation" action="create annotation queues" />;
  const list = (evs.data ?? []).filter((e) => !e.deleted_at);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setMade(null);
    create.mutate();
  };
  return (
    <>
      <form className="card new-queue" aria-label="New queue" onSubmit={submit}>
        <div className="toolbar">
          <strong>New queue over traces</strong>
          <input aria-label="Queue name" placeholder="name" value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit" className="primary" disabled={create.isPending || !name.trim() || chosen.length === 0}>
            Create queue
          </button>
        </div>
        <fieldset className="inline-choices">
          <legend className="muted">Evaluators people fill in for each trace (at least one)</legend>
          {list.map((e) => (
            <label key={e.id} className="inline">
              <input
                type="checkbox"
                aria-label={e.name || e.slug}
                checked={chosen.includes(e.id)}
                onChange={(x) => setChosen((c) => (x.target.checked ? [...c, e.id] : c.filter((id) => id !== e.id)))}
              />
              {e.name || e.slug}
            </label>
          ))}
          {evs.isSuccess && list.length === 0 && (
            <span className="muted">
              No evaluator yet: <Link to="/evaluators">create one</Link> with the outputs people should fill in.
            </span>
          )}
        </fieldset>
        <p className="muted">Then select traces in the trace list (or open one) and choose "Add to queue".</p>
      </form>
      <ErrorBox error={evs.error} />
      <ErrorBox error={create.error} title="Queue not created" />
      {made && (
        <div className="notice ok" role="status">
          Queue <Link to={`/queues/${made.id}`}>{made.name}</Link> created. Add traces to it from the <Link to="/traces">trace list</Link>.
        </div>
      )}
    </>
  );
}
