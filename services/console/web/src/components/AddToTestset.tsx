import { useState } from "react";
import { Link } from "react-router";
import { useMutation, useQuery } from "@tanstack/react-query";
import { commitDelta, latestRevisionHeader, listTestsets } from "../api/testsets";
import { traceSpans } from "../api/tracing";
import { usePermissions } from "../auth/permissions";
import { traceRow } from "../lib/traceRows";
import { ErrorBox } from "./ErrorBox";

/**
 * Adds traces to a testset as rows (lib/traceRows.ts says which columns),
 * committed as one new revision on top of the latest one. Used by the trace
 * list (the selection) and a trace.
 */
export function AddToTestset({ traceIds }: { traceIds: string[] }) {
  const perms = usePermissions();
  const sets = useQuery({ queryKey: ["testsets"], queryFn: listTestsets });
  const choices = (sets.data ?? []).filter((s) => !s.deleted_at);
  const [pick, setPick] = useState("");
  const testsetId = pick || choices[0]?.id || "";
  const [done, setDone] = useState("");
  const add = useMutation({
    mutationFn: async () => {
      const spans = (await traceSpans(traceIds)).spans ?? [];
      const rows = traceIds.map((id) => traceRow(spans.filter((s) => s.trace_id === id))).filter((r) => r !== undefined);
      if (rows.length === 0) throw new Error("No span of these traces is stored yet.");
      const base = await latestRevisionHeader(testsetId);
      if (!base) throw new Error("The testset has no revision to add to.");
      const n = rows.length === 1 ? "1 trace" : `${rows.length} traces`;
      return commitDelta(base, { rows: { add: rows.map((data) => ({ data })) } }, `Added ${n} from the traces`);
    },
    onSuccess: (rev) => {
      const name = choices.find((s) => s.id === testsetId)?.name ?? "the testset";
      const n = traceIds.length === 1 ? "1 row" : `${traceIds.length} rows`;
      setDone(`${n} added to ${name} (v${rev.version}): the inputs as columns, the output as correct_answer.`);
    },
  });
  if (!perms.can("write")) return null;
  if (sets.isSuccess && choices.length === 0) {
    return (
      <span className="muted">
        No testset yet: <Link to="/testsets">create one</Link>.
      </span>
    );
  }
  return (
    <span className="inline add-to-testset">
      <select aria-label="Testset" value={testsetId} onChange={(e) => setPick(e.target.value)}>
        {choices.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name || s.slug}
          </option>
        ))}
      </select>
      <button
        type="button"
        disabled={!testsetId || traceIds.length === 0 || add.isPending}
        onClick={() => {
          setDone("");
          add.mutate();
        }}
      >
        Add to testset
      </button>
      {done && !add.isPending && (
        <span className="ok" role="status">
          {done} <Link to={`/testsets/${testsetId}`}>Check them in the testset</Link>
        </span>
      )}
      <ErrorBox error={add.error} title="Not added" />
    </span>
  );
}
