// /console/evaluations/compare?runs=a,b,… — two or more runs over the same
// testset revision: each metric's mean per run and its delta to the first
// run (with the interval the registry computes).
import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import { compare, getRun, progress } from "../../api/evaluations";
import { ErrorBox } from "../../components/ErrorBox";
import { fmt } from "./Chart";

export default function ComparePage() {
  const [sp] = useSearchParams();
  const ids = (sp.get("runs") ?? "").split(",").filter(Boolean);
  const runs = useQuery({ queryKey: ["runs-of", ids], queryFn: () => Promise.all(ids.map(getRun)) });
  const progs = useQuery({
    queryKey: ["progress-of", ids],
    queryFn: () => Promise.all(ids.map(progress)),
    refetchInterval: (q) => (q.state.data?.every((p) => p && ["success", "failure", "errors", "cancelled"].includes(p.status)) ? false : 1500),
  });
  const allDone = progs.data?.every((p) => p && ["success", "failure", "errors", "cancelled"].includes(p.status));
  const cmp = useQuery({ queryKey: ["compare", ids, allDone], queryFn: () => compare(ids), enabled: ids.length >= 2 && !!allDone });
  const name = (id: string) => runs.data?.find((r) => r?.id === id)?.name ?? id.slice(0, 8);
  return (
    <div>
      <h1>Compare runs</h1>
      {ids.length < 2 && <p>Pick two or more runs on the evaluations page.</p>}
      <ul>
        {ids.map((id, i) => (
          <li key={id}>
            <Link to={`/evaluations/${id}`}>{name(id)}</Link> — {progs.data?.[i]?.status ?? "…"}
            {i === 0 && " (the baseline)"}
          </li>
        ))}
      </ul>
      <ErrorBox error={cmp.error} />
      {cmp.data && (
        <table data-testid="comparison">
          <thead>
            <tr>
              <th>step</th>
              <th>metric</th>
              {cmp.data.run_ids.map((id) => (
                <th key={id}>{name(id)}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {cmp.data.metrics.map((m) => (
              <tr key={m.step + m.path}>
                <td>{m.step}</td>
                <td>{m.path.replace(/^attributes\.ag\.(data\.outputs\.|metrics\.)/, "")}</td>
                {m.runs.map((r, i) => (
                  <td key={r.run_id}>
                    {r.mean !== undefined ? fmt(r.mean) : "—"}
                    {i > 0 && r.delta !== undefined && (
                      <span style={{ color: r.delta > 0 ? "#070" : r.delta < 0 ? "#b00" : undefined }} data-testid="delta">
                        {" "}
                        ({r.delta > 0 ? "+" : ""}
                        {fmt(r.delta)})
                      </span>
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
