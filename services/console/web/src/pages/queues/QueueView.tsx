import { useEffect, useMemo, useState } from "react";
import { Link, useParams } from "react-router";
import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { queuesApi, type Result, type RunStep } from "../../api/queues";
import { getEvaluatorRevision } from "../../api/registry";
import { ag, createAnnotation, traceSpans } from "../../api/tracing";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";
import { Loading } from "../../components/Loading";
import { DataView } from "../../components/Conversation";
import { JsonView } from "../../components/JsonView";
import { SchemaForm } from "../../components/SchemaForm";
import { applyPick, useQueueKeys } from "../../lib/queueKeys";

const FREE_FORM = { type: "object", properties: { score: { type: "number" }, comment: { type: "string" } } };

export default function QueueView() {
  const { queueId = "" } = useParams();
  const { session } = useAuth();
  const me = session?.user.id;
  const qc = useQueryClient();
  const queue = useQuery({ queryKey: ["queue", queueId], queryFn: () => queuesApi.get(queueId) });
  const runId = queue.data?.queue?.run_id;
  const run = useQuery({ queryKey: ["run", runId], queryFn: () => queuesApi.run(runId!), enabled: !!runId });
  const scenarios = useQuery({ queryKey: ["queue-scenarios", queueId, me], queryFn: () => queuesApi.scenarios(queueId, me) });
  const list = useMemo(() => scenarios.data?.scenarios ?? [], [scenarios.data]);
  const results = useQuery({
    queryKey: ["queue-results", runId, list.map((s) => s.id)],
    queryFn: () => queuesApi.results(runId!, list.map((s) => s.id)),
    enabled: !!runId && list.length > 0,
  });

  const steps = run.data?.run?.data.steps ?? [];
  const inputStep = steps.find((s) => s.type === "input");
  const humanSteps = useMemo(() => steps.filter((s) => s.type === "annotation" && s.origin === "human"), [steps]);
  // A step without its schema in the run takes its evaluator revision's.
  const schemaQs = useQueries({
    queries: humanSteps.map((s) => ({
      queryKey: ["evaluator-revision", s.references?.evaluator_revision?.id],
      queryFn: () => getEvaluatorRevision(s.references!.evaluator_revision!.id!),
      enabled: !s.schemas?.outputs && !!s.references?.evaluator_revision?.id,
    })),
  });
  const schemaOf = (s: RunStep, i: number): Record<string, unknown> =>
    s.schemas?.outputs ?? (schemaQs[i]?.data?.evaluator_revision?.data?.schemas?.outputs as Record<string, unknown> | undefined) ?? FREE_FORM;

  const assignments = queue.data?.queue?.data.assignments ?? [];
  const repeatIdx = Math.max(0, assignments.findIndex((us) => us.includes(me ?? "")));

  const byCell = useMemo(() => {
    const m = new Map<string, Result>();
    for (const r of results.data?.results ?? []) m.set(`${r.scenario_id}/${r.step_key}/${r.repeat_idx}`, r);
    return m;
  }, [results.data]);
  const done = (scenarioId: string) =>
    humanSteps.length > 0 && humanSteps.every((s) => byCell.get(`${scenarioId}/${s.key}/${repeatIdx}`)?.status === "success");
  const doneCount = list.filter((s) => done(s.id)).length;

  const [pos, setPos] = useState(0);
  const [forms, setForms] = useState<Record<string, unknown>>({});
  const scenario = list[Math.min(pos, Math.max(list.length - 1, 0))];
  useEffect(() => setForms({}), [scenario?.id]);
  // Start on the first scenario not done yet.
  const [started, setStarted] = useState(false);
  useEffect(() => {
    if (!started && results.isSuccess && list.length) {
      const first = list.findIndex((s) => !done(s.id));
      setPos(first < 0 ? 0 : first);
      setStarted(true);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [results.isSuccess, list, started]);

  const input = scenario && inputStep ? byCell.get(`${scenario.id}/${inputStep.key}/0`) ?? byCell.get(`${scenario.id}/${inputStep.key}/${repeatIdx}`) : undefined;
  const trace = useQuery({
    queryKey: ["trace", input?.trace_id],
    queryFn: () => traceSpans([input!.trace_id!]),
    enabled: !!input?.trace_id,
  });
  const testcase = useQuery({
    queryKey: ["testcase", input?.testcase_id],
    queryFn: () => queuesApi.testcase(input!.testcase_id!),
    enabled: !!input?.testcase_id,
  });
  const root = trace.data?.spans?.find((s) => !s.parent_id) ?? trace.data?.spans?.[0];

  const submit = useMutation({
    mutationFn: async () => {
      if (!scenario || !runId) return;
      const out: Omit<Result, "id">[] = [];
      for (const s of humanSteps) {
        const data = forms[s.key];
        if (data === undefined) throw new Error(`Fill in ${s.references?.evaluator?.slug ?? s.key} first.`);
        const ev = s.references?.evaluator ?? s.references?.evaluator_revision ?? {};
        const a = await createAnnotation({
          evaluator: { id: ev.id, slug: ev.slug },
          outputs: data,
          link: root ? { trace_id: root.trace_id, span_id: root.span_id } : { trace_id: "", span_id: "" },
          meta: { queue_id: queueId, scenario_id: scenario.id },
        });
        out.push({ run_id: runId, scenario_id: scenario.id, step_key: s.key, repeat_idx: repeatIdx, status: "success", trace_id: a.annotation.trace_id });
      }
      await queuesApi.saveResults(out);
    },
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ["queue-results", runId] });
      setPos((p) => Math.min(p + 1, list.length - 1));
    },
  });

  useQueueKeys({
    next: () => setPos((p) => Math.min(p + 1, list.length - 1)),
    prev: () => setPos((p) => Math.max(p - 1, 0)),
    submit: () => !submit.isPending && submit.mutate(),
    pick: (n) => {
      const s = humanSteps[0];
      if (!s) return;
      const d = applyPick(schemaOf(s, 0) as Parameters<typeof applyPick>[0], forms[s.key], n);
      if (d) setForms((f) => ({ ...f, [s.key]: d }));
    },
  });

  if (queue.isLoading) return <Loading />;
  const q = queue.data?.queue;
  return (
    <section className="page-queue">
      <div className="crumbs">
        <Link to="/queues">Annotation queues</Link> / {q?.name ?? queueId}
      </div>
      <h1>{q?.name ?? "Queue"}</h1>
      <ErrorBox error={queue.error ?? run.error ?? scenarios.error ?? results.error} />
      {queue.isSuccess && !q && <p className="muted">No queue {queueId} in this project.</p>}
      <div className="queue-progress" data-testid="queue-progress">
        <progress max={list.length || 1} value={doneCount} />{" "}
        <span>
          {doneCount} / {list.length} done
        </span>
        <span className="muted"> · j/k next/previous · 1–9 pick · ctrl+enter submit</span>
      </div>
      {scenarios.isSuccess && list.length === 0 && <p className="muted">Nothing assigned to you in this queue.</p>}
      {scenario && (
        <div className="queue-work">
          <div className="queue-input card">
            <div className="toolbar">
              <button type="button" onClick={() => setPos((p) => Math.max(p - 1, 0))} disabled={pos === 0}>
                ← prev (k)
              </button>
              <span>
                Scenario {pos + 1} of {list.length} {done(scenario.id) && <span className="badge ok">done</span>}
              </span>
              <button type="button" onClick={() => setPos((p) => Math.min(p + 1, list.length - 1))} disabled={pos >= list.length - 1}>
                next (j) →
              </button>
            </div>
            {input?.trace_id && (
              <>
                <p>
                  Trace <Link to={`/traces/${input.trace_id}`} className="mono">{input.trace_id}</Link>
                </p>
                {root && (
                  <>
                    <h3>Inputs</h3>
                    <DataView value={(ag(root).data as Record<string, unknown> | undefined)?.inputs} />
                    <h3>Outputs</h3>
                    <DataView value={(ag(root).data as Record<string, unknown> | undefined)?.outputs} />
                  </>
                )}
              </>
            )}
            {input?.testcase_id && testcase.data?.testcase && <JsonView value={testcase.data.testcase.data} openDepth={2} />}
            {!input && results.isSuccess && <p className="muted">This scenario has no input cell.</p>}
          </div>
          <form
            className="queue-forms card"
            onSubmit={(e) => {
              e.preventDefault();
              submit.mutate();
            }}
          >
            {humanSteps.map((s, i) => (
              <div key={s.key} className="queue-step">
                <h3>{s.references?.evaluator?.slug ?? s.key}</h3>
                <SchemaForm
                  schema={schemaOf(s, i)}
                  formData={forms[s.key]}
                  onChange={(d) => setForms((f) => ({ ...f, [s.key]: d }))}
                  onSubmit={() => submit.mutate()}
                >
                  <></>
                </SchemaForm>
              </div>
            ))}
            <ErrorBox error={submit.error} title="Not saved" />
            <button type="submit" className="primary" disabled={submit.isPending}>
              {submit.isPending ? "Saving…" : "Submit (ctrl+enter)"}
            </button>
          </form>
        </div>
      )}
    </section>
  );
}
