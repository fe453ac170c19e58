// Online evaluations: a live run scores production traces as they come
// (the registry publishes a window of new traces every interval; the
// runtime's workers run the evaluators on each). The form saves the
// traces' query (the traces page's filter builder, on top of production
// traffic) with a sampling rate and creates the live run; the run page's
// panel says whether it is live, when it last scored and how many
// traces it has scored, with stop and resume.
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "react-router";
import { createOnlineEvaluation, lastScenario, pauseOf, queryRevision, startEvaluation, stopEvaluation, type Pause, type Progress, type QueryRevision, type Run } from "../../api/evaluations";
import { headRevisionId, listEvaluators } from "../../api/evaluators";
import { ErrorBox } from "../../components/ErrorBox";
import { FilterBuilder } from "../../components/FilterBuilder";
import { usePermissions } from "../../auth/permissions";
import { FilterError, toFiltering, type Condition, type FilterRow } from "../../lib/filter";
import { PRODUCTION } from "../../lib/traffic";

export function NewOnlineEvaluation() {
  const qc = useQueryClient();
  const nav = useNavigate();
  const perms = usePermissions();
  const evaluators = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const [name, setName] = useState("");
  const [rows, setRows] = useState<FilterRow[]>([]);
  const [combine, setCombine] = useState<"and" | "or">("and");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [percent, setPercent] = useState("100");
  const [budget, setBudget] = useState("");
  const [evs, setEvs] = useState<string[]>([]);
  const [err, setErr] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const allowed = perms.can("run_evaluation") && perms.can("write");
  const rate = Number(percent) / 100;
  const rateOk = Number.isFinite(rate) && rate > 0 && rate <= 1;
  // An empty budget is no budget; the registry takes 0 < budget ≤ 1,000,000.
  const dollars = budget.trim() === "" ? undefined : Number(budget);
  const budgetOk = dollars === undefined || (Number.isFinite(dollars) && dollars > 0 && dollars <= 1_000_000);

  const create = async () => {
    setErr(null);
    let filtering;
    try {
      // Production calls only (what the traces page shows by default):
      // the registry needs trace_type is invocation at the top level, and
      // an evaluation's own application calls are not production traffic.
      filtering = toFiltering(rows, combine, PRODUCTION);
      setErrors({});
    } catch (e) {
      if (e instanceof FilterError) return setErrors({ [e.rowId]: e.message });
      throw e;
    }
    setBusy(true);
    try {
      const evRevs = await Promise.all(evs.map(headRevisionId));
      if (evRevs.some((x) => !x)) throw new Error("An evaluator has no revision.");
      const run = await createOnlineEvaluation({ name: name.trim(), filtering, rate, budget: dollars, evaluatorRevisionIds: evRevs as string[] });
      await qc.invalidateQueries({ queryKey: ["runs"] });
      nav(`/evaluations/${run.id}`);
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <details data-testid="new-live">
      <summary>New online evaluation</summary>
      <div style={{ display: "grid", gap: 8, maxWidth: 860 }}>
        <p className="muted">Scores production traces as they arrive (traces an evaluation or an evaluator leaves are left out), every minute, with the evaluators you pick.</p>
        <input placeholder="name" value={name} onChange={(e) => setName(e.currentTarget.value)} aria-label="online evaluation name" />
        <fieldset>
          <legend>Which traces (no filter: every production trace)</legend>
          <FilterBuilder
            rows={rows}
            combine={combine}
            errors={errors}
            onChange={(r, c) => {
              setRows(r);
              setCombine(c);
            }}
          />
        </fieldset>
        <label>
          Sampling rate{" "}
          <input type="number" min={1} max={100} step={1} value={percent} onChange={(e) => setPercent(e.currentTarget.value)} aria-label="sampling rate" style={{ width: 70 }} />% of the
          matching traces
        </label>
        <label>
          Daily budget $
          <input
            type="number"
            min={0}
            step="any"
            placeholder="none"
            value={budget}
            onChange={(e) => setBudget(e.currentTarget.value)}
            aria-label="daily budget"
            style={{ width: 90 }}
          />{" "}
          <span className="muted">optional: once a UTC day's scoring costs this much, no trace is scored until 00:00 UTC</span>
        </label>
        <fieldset>
          <legend>Evaluators</legend>
          {evaluators.data?.length === 0 && <span className="muted">No evaluator yet: create one on the Evaluators page.</span>}
          {evaluators.data?.map((e) => (
            <label key={e.id} style={{ display: "inline-block", marginRight: 12 }}>
              <input
                type="checkbox"
                checked={evs.includes(e.id)}
                onChange={() => setEvs((l) => (l.includes(e.id) ? l.filter((x) => x !== e.id) : [...l, e.id]))}
                aria-label={`online evaluator ${e.name || e.slug}`}
              />{" "}
              {e.name || e.slug}
            </label>
          ))}
        </fieldset>
        <button
          disabled={!allowed || !name.trim() || evs.length === 0 || !rateOk || !budgetOk || busy}
          title={
            !allowed
              ? perms.why("run_evaluation", "create online evaluations")
              : !rateOk
                ? "The sampling rate is a percentage from 1 to 100."
                : !budgetOk
                  ? "The daily budget is an amount in dollars over 0 (or empty: none)."
                  : undefined
          }
          onClick={create}
          data-testid="start-live"
        >
          {busy ? "Creating…" : "Start scoring traces"}
        </button>
        <ErrorBox error={err} />
      </div>
    </details>
  );
}

/** PauseNotice says that a live run scores nothing for now, why, and
 * when it resumes in the reader's time as well as UTC. */
export function PauseNotice({ pause }: { pause: Pause }) {
  const at = pause.resumesAt ? new Date(pause.resumesAt) : undefined;
  return (
    <p data-testid="pause-notice" role="status" className="notice" style={{ margin: "0 0 8px" }}>
      <strong>Paused: no trace is being scored</strong> ({pause.message}).
      {at && !Number.isNaN(at.getTime()) && (
        <>
          {" "}
          Scoring resumes by itself at <span data-testid="pause-resumes" data-at={pause.resumesAt}>
            {at.toLocaleString()}
          </span> your time; traces that arrive until then are not scored.
        </>
      )}
    </p>
  );
}

/** LiveBadge is a live run's state in the runs list and on its page:
 * live, paused (its daily budget reached; still live, scoring nothing
 * until the next day) or stopped. */
export function LiveBadge({ run }: { run: Run }) {
  if (!run.flags?.is_live) return null;
  if (pauseOf(run))
    return (
      <span className="badge warn" data-testid="live-badge" title={pauseOf(run)?.message}>
        paused (daily budget)
      </span>
    );
  return run.flags.is_active ? (
    <span className="badge ok" data-testid="live-badge">
      <span className="live-dot" /> live
    </span>
  ) : (
    <span className="badge" data-testid="live-badge">
      stopped
    </span>
  );
}

/** LivePanel is a live run's head on its page: live or stopped, when it
 * last scored a trace and how many it has scored, stop and resume. */
export function LivePanel({ run, progress }: { run: Run; progress?: Progress }) {
  const qc = useQueryClient();
  const perms = usePermissions();
  const last = useQuery({ queryKey: ["run-last-scenario", run.id, progress?.scenarios.total], queryFn: () => lastScenario(run.id) });
  const qid = run.data?.steps?.find((s) => s.references?.query_revision?.id)?.references?.query_revision?.id;
  const query = useQuery({ queryKey: ["query-revision", qid], queryFn: () => queryRevision(qid!), enabled: !!qid, staleTime: Infinity });
  const [err, setErr] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const active = !!run.flags?.is_active;
  const scored = progress?.scenarios.success ?? 0;
  const failed = progress?.scenarios.errors ?? 0;
  const pending = Math.max(0, (progress?.scenarios.total ?? 0) - scored - failed);
  const at = last.data?.updated_at ?? last.data?.created_at;
  const toggle = async () => {
    setErr(null);
    setBusy(true);
    try {
      await (active ? stopEvaluation(run.id) : startEvaluation(run.id));
      await qc.invalidateQueries({ queryKey: ["run", run.id] });
      await qc.invalidateQueries({ queryKey: ["run-progress", run.id] });
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };
  const pause = pauseOf(run);
  return (
    <div data-testid="live-panel" className="card" style={{ padding: 8, marginBottom: 8 }}>
      {pause && <PauseNotice pause={pause} />}
      <p style={{ margin: 0 }}>
        <LiveBadge run={run} /> Scores <span data-testid="live-scope">{scopeOf(query.data)}</span> ·{" "}
        <strong data-testid="live-scored">
          {scored} {scored === 1 ? "trace" : "traces"} scored
        </strong>
        {failed > 0 && `, ${failed} with errors`}
        {pending > 0 && `, ${pending} being scored`} · last scored{" "}
        <span data-testid="live-last">{at ? new Date(at).toLocaleString() : "not yet (new traces are scored each minute)"}</span>
      </p>
      <p style={{ margin: "6px 0 0" }}>
        <button onClick={toggle} disabled={busy || !perms.can("run_evaluation")} title={perms.can("run_evaluation") ? undefined : perms.why("run_evaluation", "stop or resume evaluations")} data-testid="live-toggle">
          {active ? "Stop scoring" : "Resume scoring"}
        </button>
      </p>
      <ErrorBox error={err} />
    </div>
  );
}

/** scopeOf says which traces a live run scores: its sampling rate and
 * the user's conditions (the production conditions every online
 * evaluation holds are left unsaid). */
export function scopeOf(q: QueryRevision | undefined): string {
  const rate = q?.data?.windowing?.rate;
  const share = rate !== undefined && rate < 1 ? `${Math.round(rate * 1000) / 10}% of ` : "";
  const own = (q?.data?.filtering?.conditions ?? []).filter((c) => {
    const x = c as Condition;
    return !PRODUCTION.some((p) => p.field === x.field && p.operator === (x.operator ?? "is"));
  });
  const say = (c: unknown): string => {
    const x = c as Condition & { conditions?: unknown[]; operator?: string };
    if (Array.isArray(x.conditions)) return x.conditions.map(say).join(` ${x.operator ?? "and"} `);
    return `${x.key ? `${x.field}.${x.key}` : x.field} ${x.operator ?? "is"}${x.value === undefined ? "" : ` ${JSON.stringify(x.value)}`}`;
  };
  const where = own.map(say).filter(Boolean).join(" and ");
  return `${share}production traces${where ? ` where ${where}` : ""}`;
}
