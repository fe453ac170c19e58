import { useState } from "react";
import { Link } from "react-router";
import { useMutation, useQuery } from "@tanstack/react-query";
import { queuesApi } from "../api/queues";
import { usePermissions } from "../auth/permissions";
import { ErrorBox } from "./ErrorBox";

/**
 * Sends traces to an annotation queue over traces (POST
 * /api/simple/queues/{id}/traces): one scenario per trace, the same trace
 * twice changes nothing. Used by the trace list (the selection) and a trace.
 */
export function AddToQueue({ traceIds, label }: { traceIds: string[]; label: string }) {
  const perms = usePermissions();
  const queues = useQuery({ queryKey: ["queues"], queryFn: queuesApi.list });
  const choices = (queues.data?.queues ?? []).filter((q) => q.data.kind === "traces");
  const [pick, setPick] = useState("");
  const queueId = pick || choices[0]?.id || "";
  const [done, setDone] = useState("");
  const add = useMutation({
    mutationFn: () => queuesApi.addTraces(queueId, traceIds),
    onSuccess: () => {
      const name = choices.find((q) => q.id === queueId)?.name ?? "the queue";
      setDone(`${traceIds.length === 1 ? "1 trace" : `${traceIds.length} traces`} added to ${name}.`);
    },
  });
  if (!perms.can("run_evaluation")) return null;
  if (queues.isSuccess && choices.length === 0) {
    return (
      <span className="muted">
        No annotation queue over traces yet: <Link to="/queues">create one</Link>.
      </span>
    );
  }
  return (
    <span className="inline add-to-queue">
      <select aria-label="Annotation queue" value={queueId} onChange={(e) => setPick(e.target.value)}>
        {choices.map((q) => (
          <option key={q.id} value={q.id}>
            {q.name || "queue " + q.id.slice(0, 8)}
          </option>
        ))}
      </select>
      <button
        type="button"
        disabled={!queueId || traceIds.length === 0 || add.isPending}
        onClick={() => {
          setDone("");
          add.mutate();
        }}
      >
        {label}
      </button>
      {done && !add.isPending && (
        <span className="ok" role="status">
          {done}{" "}
          <Link to={`/queues/${queueId}`}>Open the queue</Link>
        </span>
      )}
      <ErrorBox error={add.error} title="Not added" />
    </span>
  );
}
