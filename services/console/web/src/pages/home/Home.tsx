// /console/ — where a new user starts: the getting-started steps, each with
// its state read from the API and a link to the page that does it, until all
// are done (or the user hides them); then the project's recent evaluation
// runs with their headline scores, and its recent production traces.
import { useState } from "react";
import { Link } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { useAuth } from "../../auth/AuthContext";
import { secretsApi } from "../../api/settings";
import { listTestsets } from "../../api/testsets";
import { listApps } from "../../api/apps";
import { listEvaluators } from "../../api/evaluators";
import { globalMetrics, listRuns, type Run } from "../../api/evaluations";
import { fmtDuration, querySpans, type Span } from "../../api/tracing";
import { errorMessage } from "../../api/call";
import { PRODUCTION } from "../../lib/traffic";
import { headlines } from "./headlines";
import { Denied } from "../../auth/permissions";

const DAY = 24 * 3600 * 1000;
// The window the first-trace step and the recent traces look in.
const TRACE_WINDOW_DAYS = 90;

interface StepDef {
  key: string;
  title: string;
  why: string;
  to: string;
  action: string;
}

const STEPS: StepDef[] = [
  { key: "provider", title: "Connect a model provider", why: "A provider key (OpenAI, Anthropic, …) or a custom OpenAI-compatible provider lets applications and LLM judges call a model.", to: "/settings/secrets", action: "Add a provider key" },
  { key: "testset", title: "Upload a testset", why: "The cases your application is judged on: a CSV or JSON file of inputs and expected answers.", to: "/testsets", action: "Upload a testset" },
  { key: "application", title: "Create an application", why: "A prompt and a model, versioned: what the evaluation runs on each testcase.", to: "/apps", action: "Create an application" },
  { key: "evaluator", title: "Create an evaluator", why: "How an answer is judged: a regular expression, an LLM judge, your own code… (Exact Match, Contains JSON and Quality Rating come with every project).", to: "/evaluators", action: "Create an evaluator" },
  { key: "evaluation", title: "Run a first evaluation", why: "The testset through the application, every answer judged by the evaluators.", to: "/evaluations", action: "Start an evaluation" },
  { key: "trace", title: "Send a first production trace", why: "Instrument your application with OpenTelemetry (or the compatible SDK) to see its calls, costs and latencies: any OpenTelemetry SDK sends to Assay with these two variables and an API key of this project.", to: "/settings/keys", action: "Create an API key" },
];

// Where a done step's "Open" leads, when not where its action does.
const DONE_LINK: Record<string, string> = { trace: "/traces" };

// The evaluators every new project is given (services/gateway/internal/seeder/seeder.go):
// they do not make the evaluator step done, the user has not chosen how to judge yet.
const SEEDED_EVALUATORS = new Set(["exact-match", "contains-json", "quality-rating"]);

const DISMISS_KEY = "assay.home.getting-started.hidden.";

function dismissed(project: string): boolean {
  try {
    return localStorage.getItem(DISMISS_KEY + project) === "1";
  } catch {
    return false;
  }
}

function setDismissed(project: string, v: boolean) {
  try {
    if (v) localStorage.setItem(DISMISS_KEY + project, "1");
    else localStorage.removeItem(DISMISS_KEY + project);
  } catch {
    /* private mode: it lasts for this page only */
  }
}

/** The project's production root spans, newest first. */
function recentTraces(): Promise<Span[]> {
  const now = Date.now();
  return querySpans(
    { operator: "and", conditions: [{ field: "parent_id", operator: "is", value: null }, ...PRODUCTION] },
    { oldest: new Date(now - TRACE_WINDOW_DAYS * DAY).toISOString(), newest: new Date(now + 60_000).toISOString(), limit: 5, order: "descending" },
  ).then((r) => r.spans ?? []);
}

function runsOnly(runs: Run[]): Run[] {
  return runs.filter((r) => !r.flags?.is_queue).sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? ""));
}

export default function Home() {
  const { session, project, projectId } = useAuth();
  const secrets = useQuery({ queryKey: ["secrets"], queryFn: secretsApi.list });
  const testsets = useQuery({ queryKey: ["testsets"], queryFn: listTestsets });
  const apps = useQuery({ queryKey: ["apps"], queryFn: listApps });
  const evaluators = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const runs = useQuery({ queryKey: ["runs"], queryFn: listRuns });
  const traces = useQuery({ queryKey: ["home-traces"], queryFn: recentTraces });
  const [hidden, setHidden] = useState(() => dismissed(projectId));

  // What each step found: the names of what exists, so a done step says what.
  const found: Record<string, { q: { isPending: boolean; error: unknown }; names: string[] | undefined }> = {
    provider: {
      q: secrets,
      names: secrets.data?.filter((s) => s.kind === "provider_key" || s.kind === "custom_provider").map((s) => s.header?.name || s.slug || s.data?.provider_slug || s.kind),
    },
    testset: { q: testsets, names: testsets.data?.filter((t) => !t.deleted_at).map((t) => t.name || t.slug) },
    application: { q: apps, names: apps.data?.map((a) => a.name || a.slug) },
    evaluator: { q: evaluators, names: evaluators.data?.filter((e) => !e.deleted_at && !SEEDED_EVALUATORS.has(e.slug)).map((e) => e.name || e.slug) },
    evaluation: { q: runs, names: runs.data && runsOnly(runs.data).map((r) => r.name || "run") },
    trace: { q: traces, names: traces.data?.map((s) => s.span_name) },
  };
  const state = (k: string): "loading" | "done" | "todo" | "unknown" => {
    const f = found[k];
    if (f.q.isPending) return "loading";
    if (f.q.error) return "unknown";
    return (f.names?.length ?? 0) > 0 ? "done" : "todo";
  };
  const done = STEPS.filter((s) => state(s.key) === "done").length;
  const settled = STEPS.every((s) => state(s.key) !== "loading");
  const complete = settled && done === STEPS.length;
  const showSteps = !complete && !hidden;

  return (
    <section className="home">
      <h1>Welcome{session?.user.name ? `, ${session.user.name}` : ""}</h1>
      <p className="muted">
        Project <strong>{project?.name ?? "—"}</strong>
        {project && <> · your role: {project.role}</>}
      </p>

      {showSteps && (
        <div className="card getting-started" data-testid="getting-started">
          <div className="gs-head">
            <h2>Get started</h2>
            <span className="muted" data-testid="steps-done">
              {settled ? `${done} of ${STEPS.length} done` : "checking…"}
            </span>
            <span className="spacer" />
            <button
              type="button"
              className="link"
              onClick={() => {
                setDismissed(projectId, true);
                setHidden(true);
              }}
            >
              Hide these steps
            </button>
          </div>
          <Denied perm="write" action="create testsets, applications or evaluators in this project" />
          <ol className="gs-steps">
            {STEPS.map((s) => {
              const st = state(s.key);
              const names = found[s.key].names ?? [];
              return (
                <li key={s.key} data-step={s.key} data-state={st} className={`gs-step gs-${st}`}>
                  <span className="gs-mark" aria-label={st === "done" ? "done" : "not done yet"}>
                    {st === "done" ? "✓" : st === "loading" ? "…" : "○"}
                  </span>
                  <div className="gs-body">
                    <strong>{s.title}</strong>
                    {st === "done" ? (
                      <span className="muted">
                        {" "}
                        — done: {names.slice(0, 3).join(", ")}
                        {names.length > 3 ? ` and ${names.length - 3} more` : ""}
                      </span>
                    ) : (
                      <div className="muted">{s.why}</div>
                    )}
                    {s.key === "trace" && st === "todo" && (
                      <pre className="gs-snippet" data-testid="otlp-env">
                        {`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${window.location.origin}/api/otlp/v1/traces\nOTEL_EXPORTER_OTLP_HEADERS=Authorization=ApiKey%20<your API key>`}
                      </pre>
                    )}
                    {st === "unknown" && <div className="field-error">Could not check: {errorMessage(found[s.key].q.error)}</div>}
                  </div>
                  <Link to={st === "done" ? (DONE_LINK[s.key] ?? s.to) : s.to} className={st === "done" ? "gs-link" : "gs-link button-link"}>
                    {st === "done" ? "Open" : s.action}
                  </Link>
                </li>
              );
            })}
          </ol>
        </div>
      )}
      {!showSteps && !complete && settled && (
        <p className="muted">
          {done} of {STEPS.length} getting-started steps done.{" "}
          <button
            type="button"
            className="link"
            onClick={() => {
              setDismissed(projectId, false);
              setHidden(false);
            }}
          >
            Show getting started
          </button>
        </p>
      )}

      {/* A new project's lists are empty: they show once there is something, or once the steps are hidden. */}
      {(!showSteps || !!runs.data?.some((r) => !r.flags?.is_queue) || !!traces.data?.length) && (
      <div className="home-columns">
        <RecentRuns runs={runs.data ? runsOnly(runs.data).slice(0, 5) : undefined} evaluators={evaluators.data} />
        <RecentTraces spans={traces.data} error={traces.error} />
      </div>
      )}
    </section>
  );
}

function RecentRuns({ runs, evaluators }: { runs: Run[] | undefined; evaluators: { id: string; slug: string; name?: string }[] | undefined }) {
  return (
    <div className="card" data-testid="recent-runs">
      <h2>
        Recent evaluations <Link to="/evaluations" className="muted small">all</Link>
      </h2>
      {runs && runs.length === 0 && <p className="muted">No evaluation yet.</p>}
      <ul className="home-list">
        {runs?.map((r) => <RunLine key={r.id} run={r} evaluators={evaluators ?? []} />)}
      </ul>
    </div>
  );
}

function RunLine({ run, evaluators }: { run: Run; evaluators: { id: string; slug: string; name?: string }[] }) {
  const finished = run.status !== "pending" && run.status !== "queued" && run.status !== "running";
  const m = useQuery({ queryKey: ["run-metrics", run.id, finished], queryFn: () => globalMetrics(run.id), enabled: finished });
  const lines = m.data ? headlines(m.data, run.data?.steps ?? [], evaluators) : [];
  return (
    <li data-testid="recent-run">
      <Link to={`/evaluations/${run.id}`}>{run.name || "evaluation"}</Link> <span className={`badge status-${run.status}`}>{run.status}</span>{" "}
      <span className="muted small">{run.created_at?.slice(0, 16).replace("T", " ")}</span>
      {lines.length > 0 && (
        <div className="headlines">
          {lines.map((h) => (
            <span key={h.label} className="headline" title={h.title}>
              {h.label} <strong>{h.value}</strong>
            </span>
          ))}
        </div>
      )}
    </li>
  );
}

function RecentTraces({ spans, error }: { spans: Span[] | undefined; error: unknown }) {
  return (
    <div className="card" data-testid="recent-traces">
      <h2>
        Recent production traces <Link to="/traces" className="muted small">all</Link>
      </h2>
      {!!error && <p className="field-error">{errorMessage(error)}</p>}
      {spans && spans.length === 0 && <p className="muted">No production trace in the last {TRACE_WINDOW_DAYS} days.</p>}
      <ul className="home-list">
        {spans?.map((s) => (
          <li key={s.trace_id}>
            <Link to={`/traces/${s.trace_id}`}>{s.span_name}</Link>{" "}
            {s.status_code === "STATUS_CODE_ERROR" && <span className="badge error">error</span>}{" "}
            <span className="muted small">
              {s.start_time.slice(0, 16).replace("T", " ")} · {fmtDuration(Date.parse(s.end_time) - Date.parse(s.start_time))}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
