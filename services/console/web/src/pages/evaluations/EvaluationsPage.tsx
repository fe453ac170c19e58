// /console/evaluations — the project's runs, a new run (testset revision,
// application revisions, evaluators; one run per application revision),
// and a comparison of the picked runs.
import { useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router";
import { createEvaluation, estimateEvaluation, listRuns, type Estimate } from "../../api/evaluations";
import { listTestsets, latestRevisionHeader } from "../../api/testsets";
import { appRevisions, listApps } from "../../api/apps";
import { headRevisionId, listEvaluators } from "../../api/evaluators";
import { ErrorBox } from "../../components/ErrorBox";
import { Denied, usePermissions } from "../../auth/permissions";
import { variantLabel } from "../../lib/stepNames";
import { usd } from "../../lib/usd";
import { LiveBadge, NewOnlineEvaluation } from "./OnlineEvaluation";

export default function EvaluationsPage() {
  const runs = useQuery({ queryKey: ["runs"], queryFn: listRuns, refetchInterval: 5000 });
  const [pick, setPick] = useState<string[]>([]);
  const nav = useNavigate();
  return (
    <div>
      <h1>Evaluations</h1>
      <Denied perm="run_evaluation" action="start evaluations" />
      <NewRun />
      <NewOnlineEvaluation />
      <ErrorBox error={runs.error} />
      <p>
        <button disabled={pick.length < 2} onClick={() => nav(`/evaluations/compare?runs=${pick.join(",")}`)} data-testid="compare">
          Compare {pick.length} runs
        </button>
      </p>
      <table data-testid="runs-list">
        <thead>
          <tr>
            <th></th>
            <th>Name</th>
            <th>Status</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          {runs.data
            ?.filter((r) => !r.flags?.is_queue)
            .map((r) => (
              <tr key={r.id}>
                <td>
                  <input type="checkbox" aria-label={`pick ${r.name ?? r.id}`} checked={pick.includes(r.id)} onChange={() => setPick((p) => (p.includes(r.id) ? p.filter((x) => x !== r.id) : [...p, r.id]))} />
                </td>
                <td>
                  <Link to={`/evaluations/${r.id}`}>{r.name || r.id}</Link>
                </td>
                <td className={`status-${r.status}`}>
                  {r.flags?.is_live ? <LiveBadge run={r} /> : r.status}
                </td>
                <td>{r.created_at?.slice(0, 19).replace("T", " ")}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}

function NewRun() {
  const qc = useQueryClient();
  const nav = useNavigate();
  const perms = usePermissions();
  const testsets = useQuery({ queryKey: ["testsets"], queryFn: listTestsets });
  const apps = useQuery({ queryKey: ["apps"], queryFn: listApps });
  const evaluators = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const [name, setName] = useState("");
  const [testset, setTestset] = useState("");
  const [app, setApp] = useState("");
  const revs = useQuery({ queryKey: ["app-revisions", app], queryFn: () => appRevisions(app), enabled: !!app });
  const [appRevs, setAppRevs] = useState<string[]>([]);
  const [evs, setEvs] = useState<string[]>([]);
  const [budget, setBudget] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const budgetUSD = Number(budget) > 0 ? Number(budget) : undefined;
  // The estimate of what Start would run, as soon as it is runnable.
  const ready = !!testset && evs.length > 0 && (!app || appRevs.length > 0);
  const estimate = useQuery({
    queryKey: ["estimate", testset, appRevs, evs],
    enabled: ready,
    queryFn: async () => {
      const ts = await latestRevisionHeader(testset);
      const evRevs = await Promise.all(evs.map(headRevisionId));
      if (!ts || evRevs.some((x) => !x)) return [];
      return estimateEvaluation({ name: "", testsetRevisionId: ts.id, applicationRevisionIds: appRevs, evaluatorRevisionIds: evRevs as string[] });
    },
  });
  const runnable = useMemo(() => (revs.data ?? []).filter((r) => r.data?.uri).sort((a, b) => Number(b.version) - Number(a.version)), [revs.data]);

  const start = async () => {
    setBusy(true);
    setErr(null);
    try {
      const ts = await latestRevisionHeader(testset);
      if (!ts) throw new Error("The testset has no revision.");
      const evRevs = await Promise.all(evs.map(headRevisionId));
      if (evRevs.some((x) => !x)) throw new Error("An evaluator has no revision.");
      const runs = await createEvaluation({ name: name || "evaluation", testsetRevisionId: ts.id, applicationRevisionIds: appRevs, evaluatorRevisionIds: evRevs as string[], budget: budgetUSD });
      await qc.invalidateQueries({ queryKey: ["runs"] });
      nav(runs.length === 1 ? `/evaluations/${runs[0].id}` : `/evaluations/compare?runs=${runs.map((r) => r.id).join(",")}`);
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (l: string[], set: (x: string[]) => void, id: string) => set(l.includes(id) ? l.filter((x) => x !== id) : [...l, id]);

  return (
    <details open={false} data-testid="new-run">
      <summary>New evaluation</summary>
      <div style={{ display: "grid", gap: 8, maxWidth: 720 }}>
        <input placeholder="name" value={name} onChange={(e) => setName(e.currentTarget.value)} aria-label="run name" />
        <label>
          Testset (its latest revision){" "}
          <select value={testset} onChange={(e) => setTestset(e.currentTarget.value)} aria-label="testset">
            <option value="">…</option>
            {testsets.data?.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name || t.slug}
              </option>
            ))}
          </select>
        </label>
        <label>
          Application{" "}
          <select value={app} onChange={(e) => (setApp(e.currentTarget.value), setAppRevs([]))} aria-label="application">
            <option value="">none (evaluate the testset itself)</option>
            {apps.data?.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name || a.slug}
              </option>
            ))}
          </select>
        </label>
        {app && (
          <fieldset>
            <legend>Application revisions (one run each)</legend>
            {runnable.map((r) => (
              <label key={r.id} style={{ display: "block" }}>
                <input type="checkbox" checked={appRevs.includes(r.id)} onChange={() => toggle(appRevs, setAppRevs, r.id)} aria-label={`revision ${variantLabel(r.application_variant_slug)} v${r.version}`} />{" "}
                {variantLabel(r.application_variant_slug)} v{r.version} {r.message && `— ${r.message}`}
              </label>
            ))}
          </fieldset>
        )}
        <fieldset>
          <legend>Evaluators</legend>
          {evaluators.data?.map((e) => (
            <label key={e.id} style={{ display: "inline-block", marginRight: 12 }}>
              <input type="checkbox" checked={evs.includes(e.id)} onChange={() => toggle(evs, setEvs, e.id)} aria-label={`evaluator ${e.slug}`} /> {e.name || e.slug}
            </label>
          ))}
        </fieldset>
        <label>
          Budget per run, USD (optional){" "}
          <input type="number" min="0" step="0.01" value={budget} onChange={(e) => setBudget(e.currentTarget.value)} aria-label="budget" placeholder="no limit" style={{ width: 100 }} />{" "}
          <span className="muted">a run that reaches it stops, cancelled, with the reason on its page</span>
        </label>
        {ready && <EstimateLine estimates={estimate.data} loading={estimate.isLoading} error={estimate.error} />}
        <button
          disabled={!perms.can("run_evaluation") || !testset || evs.length === 0 || (!!app && appRevs.length === 0) || busy}
          title={perms.can("run_evaluation") ? undefined : perms.why("run_evaluation", "start evaluations")}
          onClick={start}
          data-testid="start-run"
        >
          {busy ? "Starting…" : "Start"}
        </button>
        <ErrorBox error={err} />
      </div>
    </details>
  );
}

/** EstimateLine says what the run(s) Start would begin should cost, and on
 * what assumptions (hover). */
function EstimateLine({ estimates, loading, error }: { estimates?: Estimate[]; loading: boolean; error: unknown }) {
  if (loading) return <p className="muted">Estimating the cost…</p>;
  if (error || !estimates?.length) return null;
  const cost = estimates.reduce((s, e) => s + (e.cost ?? 0), 0);
  const cells = estimates.reduce((s, e) => s + e.cells, 0);
  const calls = estimates.reduce((s, e) => s + e.model_calls, 0);
  const models = [...new Set(estimates.flatMap((e) => e.models))];
  const unpriced = [...new Set(estimates.flatMap((e) => e.unpriced_models))];
  const unknown = estimates.some((e) => e.cost === null);
  return (
    <p data-testid="run-estimate" title={estimates[0].assumptions.join("\n")}>
      Estimated cost <strong>{unknown ? "unknown" : usd(cost)}</strong>
      {estimates.length > 1 ? ` for ${estimates.length} runs` : ""} · {cells} cells, {calls} model calls
      {models.length ? ` (${models.join(", ")})` : ""}
      {unpriced.length ? ` · no price for ${unpriced.join(", ")}` : ""} <span className="muted">— an estimate: prompt ≈ (template + testcase characters) / 4 tokens, answers at max_tokens or 256; hover for the assumptions</span>
    </p>
  );
}
