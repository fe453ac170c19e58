// /console/playground — edit a prompt's messages, template variables and
// model settings and run them through the runtime, streamed, for one to
// three variants side by side; commit the edits as a new revision of the
// variant and deploy it.
import { useEffect, useMemo, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import {
  appRevisions,
  commitAppRevision,
  deploy,
  invokeStream,
  listApps,
  listEnvironments,
  templateVariables,
  type AppRevision,
  type InvokeResult,
  type PromptTemplate,
} from "../../api/apps";
import type { StreamFormat } from "../../api/stream";
import { errorMessage } from "../../api/call";
import { Denied, usePermissions } from "../../auth/permissions";
import { LoadTestcase } from "./LoadTestcase";
import { ModelPicker, useProviders } from "../../components/ModelPicker";
import { RunFigures } from "./RunFigures";
import { variantLabel } from "../../lib/stepNames";
import { ChatView, answerText, history, isChatURI, type Turn } from "./Chat";

interface Pane {
  key: number;
  revisionId: string;
  prompt: PromptTemplate;
  output: string;
  result?: InvokeResult;
  running: boolean;
  note?: string;
  /** Milliseconds from the request to the end of the answer, as the browser saw it. */
  elapsedMs?: number;
  /** The conversation of a chat application's pane. */
  chat?: Turn[];
}

// No model: the pane picks the project's default configured model (a
// fixed gpt-4o-mini answered 424 in a project with only a custom provider).
const EMPTY: PromptTemplate = { messages: [{ role: "user", content: "" }], template_format: "curly", llm_config: { model: "" } };

const INPUTS_KEY = "assay.playground.inputs";

function loadInputs(): Record<string, Record<string, string>> {
  try {
    const v = JSON.parse(sessionStorage.getItem(INPUTS_KEY) ?? "{}");
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

function saveInputs(v: Record<string, Record<string, string>>) {
  try {
    sessionStorage.setItem(INPUTS_KEY, JSON.stringify(v));
  } catch {
    // storage full or refused: the values live as long as the page
  }
}

function promptOf(r: AppRevision | undefined): PromptTemplate {
  const p = r?.data?.parameters?.prompt;
  return p ? (JSON.parse(JSON.stringify(p)) as PromptTemplate) : structuredClone(EMPTY);
}

export default function Playground() {
  const [sp, setSp] = useSearchParams();
  const appId = sp.get("app") ?? "";
  const qc = useQueryClient();
  const perms = usePermissions();
  const apps = useQuery({ queryKey: ["apps"], queryFn: listApps });
  const revs = useQuery({ queryKey: ["app-revisions", appId], queryFn: () => appRevisions(appId), enabled: !!appId });
  const envs = useQuery({ queryKey: ["environments"], queryFn: listEnvironments });
  // The head revision of each variant: the ones a pane starts from.
  const heads = useMemo(() => {
    const m = new Map<string, AppRevision>();
    for (const r of revs.data ?? []) {
      if (!r.data?.uri) continue;
      const h = m.get(r.application_variant_id);
      if (!h || Number(r.version) > Number(h.version)) m.set(r.application_variant_id, r);
    }
    return [...m.values()];
  }, [revs.data]);
  const [panes, setPanes] = useState<Pane[]>([]);
  // The variable values, per application, kept for the tab's session: a
  // commit, then a look at the revisions page and back, used to find them
  // empty (the page had unmounted).
  const [inputsByApp, setInputsByApp] = useState<Record<string, Record<string, string>>>(loadInputs);
  const inputs = inputsByApp[appId] ?? {};
  const setInputs = (v: Record<string, string>) => setInputsByApp((m) => ({ ...m, [appId]: v }));
  useEffect(() => saveInputs(inputsByApp), [inputsByApp]);
  const [format, setFormat] = useState<StreamFormat>("sse");
  const nextKey = useRef(1);

  // Another application: its panes start over (not on mount: the revisions
  // may already be cached and the first pane set).
  const shownApp = useRef(appId);
  useEffect(() => {
    if (shownApp.current !== appId) {
      shownApp.current = appId;
      setPanes([]);
    }
  }, [appId]);
  useEffect(() => {
    if (heads.length && panes.length === 0) {
      setPanes([{ key: nextKey.current++, revisionId: heads[0].id, prompt: promptOf(heads[0]), output: "", running: false }]);
    }
  }, [heads, panes.length]);

  const vars = useMemo(() => {
    const s = new Set<string>();
    for (const p of panes) for (const v of templateVariables(p.prompt)) s.add(v);
    return [...s];
  }, [panes]);

  const update = (key: number, f: (p: Pane) => Pane) => setPanes((ps) => ps.map((p) => (p.key === key ? f(p) : p)));
  const revOf = (p: Pane) => revs.data?.find((r) => r.id === p.revisionId);

  const run = async (p: Pane) => {
    update(p.key, (x) => ({ ...x, output: "", result: undefined, running: true, note: undefined, elapsedMs: undefined }));
    const t0 = performance.now();
    try {
      const res = await invokeStream(
        { revisionId: p.revisionId, parameters: { ...(revOf(p)?.data?.parameters ?? {}), prompt: p.prompt }, inputs: { ...inputs } },
        format,
        (d) => update(p.key, (x) => ({ ...x, output: x.output + d })),
      );
      update(p.key, (x) => ({ ...x, result: res, running: false, output: res.text || x.output, elapsedMs: performance.now() - t0 }));
    } catch (e) {
      update(p.key, (x) => ({ ...x, running: false, result: { text: "", error: errorMessage(e) } }));
    }
  };

  // A chat pane: the message goes with the conversation so far as the
  // template's messages input; the answer streams into its own turn.
  const send = async (p: Pane, message: string) => {
    const sent = history(p.chat ?? [], message);
    const setLast = (f: (t: Turn) => Turn) =>
      update(p.key, (x) => {
        const c = [...(x.chat ?? [])];
        c[c.length - 1] = f(c[c.length - 1]);
        return { ...x, chat: c };
      });
    update(p.key, (x) => ({ ...x, running: true, chat: [...(x.chat ?? []), { role: "user", content: message }, { role: "assistant", content: "", pending: true }] }));
    const t0 = performance.now();
    try {
      const res = await invokeStream(
        { revisionId: p.revisionId, parameters: { ...(revOf(p)?.data?.parameters ?? {}), prompt: p.prompt }, inputs: { ...inputs, messages: sent } },
        format,
        (d) => setLast((t) => ({ ...t, content: t.content + d })),
      );
      setLast((t) => ({ ...t, content: answerText(res.text || t.content, res.outputs), pending: false, traceId: res.traceId, elapsedMs: performance.now() - t0, error: res.error && `${res.status ? `HTTP ${res.status}: ` : ""}${res.error}` }));
    } catch (e) {
      setLast((t) => ({ ...t, pending: false, error: errorMessage(e) }));
    } finally {
      update(p.key, (x) => ({ ...x, running: false }));
    }
  };

  const commit = async (p: Pane, message: string) => {
    const base = revOf(p);
    if (!base) return;
    try {
      const r = await commitAppRevision(base, { ...base.data, parameters: { ...(base.data?.parameters ?? {}), prompt: p.prompt } }, message || "Edited in the playground");
      await qc.invalidateQueries({ queryKey: ["app-revisions", appId] });
      update(p.key, (x) => ({ ...x, revisionId: r.id, note: `Committed v${r.version}.` }));
    } catch (e) {
      update(p.key, (x) => ({ ...x, note: errorMessage(e) }));
    }
  };

  const doDeploy = async (p: Pane, env: string) => {
    try {
      await deploy(p.revisionId, env, "deployed from the playground");
      update(p.key, (x) => ({ ...x, note: `Deployed to ${env}.` }));
    } catch (e) {
      update(p.key, (x) => ({ ...x, note: errorMessage(e) }));
    }
  };

  const runnable = panes.filter((p) => !isChatURI(revOf(p)?.data?.uri));
  return (
    <div>
      <h1>Playground</h1>
      <div style={{ display: "flex", gap: 12, alignItems: "center", flexWrap: "wrap" }}>
        <select value={appId} onChange={(e) => setSp({ app: e.currentTarget.value })} aria-label="application">
          <option value="">application…</option>
          {apps.data?.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name || a.slug}
            </option>
          ))}
        </select>
        <button
          disabled={panes.length >= 3 || heads.length === 0}
          onClick={() => {
            const r = heads[panes.length % heads.length];
            setPanes((ps) => [...ps, { key: nextKey.current++, revisionId: r.id, prompt: promptOf(r), output: "", running: false }]);
          }}
        >
          Add a variant side by side
        </button>
        {/* A chat pane runs with its own Send: with chat panes only, a Run
            here would do nothing. */}
        {(panes.length === 0 || runnable.length > 0) && (
          <button
            disabled={!perms.can("run_service") || runnable.length === 0 || panes.some((p) => p.running)}
            title={perms.can("run_service") ? undefined : perms.why("run_service", "run applications")}
            onClick={() => runnable.forEach(run)}
            data-testid="run-all"
          >
            Run {runnable.length > 1 ? "all" : ""}
          </button>
        )}
        {appId && <Link to={`/apps/${appId}`}>Revisions and environments</Link>}
        <Denied perm="run_service" action="run applications in the playground" />
        {/* How the answer streams matters only to someone checking the API
            behind the playground: out of the way, in plain words. */}
        <details data-testid="playground-advanced">
          <summary>Advanced</summary>
          <label>
            receive the answer as{" "}
            <select value={format} onChange={(e) => setFormat(e.currentTarget.value as StreamFormat)} aria-label="stream format">
              <option value="sse">a stream of events (default)</option>
              <option value="ndjson">one JSON line per piece</option>
            </select>
          </label>
        </details>
      </div>
      {vars.length > 0 && (
        <fieldset style={{ margin: "12px 0" }}>
          <legend>Template variables</legend>
          <LoadTestcase vars={vars} onLoad={(values) => setInputsByApp((m) => ({ ...m, [appId]: { ...m[appId], ...values } }))} />
          {vars.map((v) => (
            <label key={v} style={{ display: "block" }}>
              <code>{v}</code>{" "}
              <input value={inputs[v] ?? ""} onChange={(e) => setInputs({ ...inputs, [v]: e.currentTarget.value })} aria-label={`variable ${v}`} />
            </label>
          ))}
        </fieldset>
      )}
      <div style={{ display: "grid", gridTemplateColumns: `repeat(${Math.max(1, panes.length)}, 1fr)`, gap: 12 }}>
        {panes.map((p) => (
          <PaneView
            key={p.key}
            pane={p}
            heads={heads}
            revisions={revs.data ?? []}
            envs={envs.data?.map((e) => e.slug) ?? []}
            onChange={(f) => update(p.key, f)}
            onRemove={panes.length > 1 ? () => setPanes((ps) => ps.filter((x) => x.key !== p.key)) : undefined}
            onRun={() => run(p)}
            onSend={(m) => send(p, m)}
            onClear={() => update(p.key, (x) => ({ ...x, chat: [] }))}
            onCommit={(m) => commit(p, m)}
            onDeploy={(env) => doDeploy(p, env)}
          />
        ))}
      </div>
    </div>
  );
}

function PaneView({
  pane,
  heads,
  revisions,
  envs,
  onChange,
  onRemove,
  onRun,
  onSend,
  onClear,
  onCommit,
  onDeploy,
}: {
  pane: Pane;
  heads: AppRevision[];
  revisions: AppRevision[];
  envs: string[];
  onChange: (f: (p: Pane) => Pane) => void;
  onRemove?: () => void;
  onRun: () => void;
  onSend: (message: string) => void;
  onClear: () => void;
  onCommit: (message: string) => void;
  onDeploy: (env: string) => void;
}) {
  const perms = usePermissions();
  const [message, setMessage] = useState("");
  const p = pane.prompt;
  const setPrompt = (np: PromptTemplate) => onChange((x) => ({ ...x, prompt: np }));
  const llm = p.llm_config ?? {};
  const cur = revisions.find((r) => r.id === pane.revisionId);
  const num = (s: string) => (s === "" ? undefined : Number(s));
  const providers = useProviders();
  const fallback = providers.data?.default;
  useEffect(() => {
    if (!llm.model && fallback) onChange((x) => ({ ...x, prompt: { ...x.prompt, llm_config: { ...(x.prompt.llm_config ?? {}), model: fallback } } }));
  }, [llm.model, fallback, onChange]);
  const chat = isChatURI(cur?.data?.uri);
  const settings = (
    <>
        {p.messages.map((m, i) => (
          <div key={i} style={{ margin: "6px 0" }}>
            <select
              value={m.role}
              aria-label={`role of message ${i + 1}`}
              onChange={(e) => setPrompt({ ...p, messages: p.messages.map((x, k) => (k === i ? { ...x, role: e.currentTarget.value } : x)) })}
            >
              <option>system</option>
              <option>user</option>
              <option>assistant</option>
            </select>
            <button onClick={() => setPrompt({ ...p, messages: p.messages.filter((_, k) => k !== i) })} aria-label={`remove message ${i + 1}`}>
              −
            </button>
            <textarea
              rows={3}
              style={{ width: "100%" }}
              value={typeof m.content === "string" ? m.content : JSON.stringify(m.content)}
              aria-label={`message ${i + 1}`}
              onChange={(e) => setPrompt({ ...p, messages: p.messages.map((x, k) => (k === i ? { ...x, content: e.currentTarget.value } : x)) })}
            />
          </div>
        ))}
        <button onClick={() => setPrompt({ ...p, messages: [...p.messages, { role: "user", content: "" }] })}>Add message</button>
        <fieldset className="model-settings">
          <legend>Model</legend>
          <label>
            model <ModelPicker value={llm.model ?? ""} onChange={(m) => setPrompt({ ...p, llm_config: { ...llm, model: m } })} />
          </label>
          <label>
            temperature{" "}
            <input type="number" step="0.1" min="0" max="2" value={llm.temperature ?? ""} onChange={(e) => setPrompt({ ...p, llm_config: { ...llm, temperature: num(e.currentTarget.value) } })} aria-label="temperature" style={{ width: 70 }} />
          </label>
          <label>
            max tokens{" "}
            <input type="number" min="1" value={llm.max_tokens ?? ""} onChange={(e) => setPrompt({ ...p, llm_config: { ...llm, max_tokens: num(e.currentTarget.value) } })} aria-label="max tokens" style={{ width: 80 }} />
          </label>
          <label>
            format{" "}
            <select value={p.template_format ?? "curly"} onChange={(e) => setPrompt({ ...p, template_format: e.currentTarget.value as PromptTemplate["template_format"] })} aria-label="template format">
              <option>curly</option>
              <option>mustache</option>
              <option>fstring</option>
              <option>jinja2</option>
            </select>
          </label>
        </fieldset>
    </>
  );
  return (
    <section className="pane" data-testid="playground-pane" style={{ border: "1px solid #ddd", padding: 8, borderRadius: 4 }}>
      <div style={{ display: "flex", gap: 6 }}>
        <select
          value={heads.some((h) => h.id === pane.revisionId) ? pane.revisionId : ""}
          aria-label="variant"
          onChange={(e) => {
            const r = heads.find((h) => h.id === e.currentTarget.value);
            if (r) onChange((x) => ({ ...x, revisionId: r.id, prompt: promptOf(r) }));
          }}
        >
          {!heads.some((h) => h.id === pane.revisionId) && <option value="">v{cur?.version}</option>}
          {heads.map((h) => (
            <option key={h.id} value={h.id}>
              {variantLabel(h.application_variant_slug) || h.application_variant_id.slice(0, 8)} v{h.version}
            </option>
          ))}
        </select>
        {onRemove && <button onClick={onRemove}>✕</button>}
      </div>
      {chat ? (
        // A chat pane: the conversation and its message box first, where
        // the eye goes; the prompt and the model beside it (below it when
        // the pane is narrow), and collapsible.
        <div className="chat-layout">
          <ChatView
            turns={pane.chat ?? []}
            running={pane.running}
            canRun={perms.can("run_service")}
            why={perms.why("run_service", "run applications")}
            onSend={onSend}
            onClear={onClear}
          />
          <details open data-testid="chat-settings" className="chat-settings">
            <summary>
              Prompt and model <span className="muted">({llm.model || "no model"})</span>
            </summary>
            {settings}
          </details>
        </div>
      ) : (
        <>
          {settings}
          <button onClick={onRun} disabled={pane.running || !perms.can("run_service")} title={perms.can("run_service") ? undefined : perms.why("run_service", "run applications")}>
            {pane.running ? "Running…" : "Run"}
          </button>
          <pre data-testid="pane-output" style={{ whiteSpace: "pre-wrap", background: "#f8f8f8", minHeight: 48, padding: 6 }}>
            {pane.output}
          </pre>
          {pane.result && !pane.running && <RunFigures traceId={pane.result.traceId} elapsedMs={pane.elapsedMs} />}
        </>
      )}
      {pane.result?.error && (
        <p role="alert" style={{ color: "#b00" }}>
          {pane.result.status ? `HTTP ${pane.result.status}: ` : ""}
          {pane.result.error}
        </p>
      )}
      {pane.result?.traceId && (
        <p>
          <Link to={`/traces/${pane.result.traceId}`}>trace {pane.result.traceId.slice(0, 12)}…</Link>
        </p>
      )}
      <div style={{ display: "flex", gap: 6 }}>
        <input placeholder="commit message" value={message} onChange={(e) => setMessage(e.currentTarget.value)} aria-label="commit message" />
        <button onClick={() => (onCommit(message), setMessage(""))} data-testid="pane-commit">
          Commit
        </button>
        <select value="" aria-label="deploy" onChange={(e) => e.currentTarget.value && onDeploy(e.currentTarget.value)}>
          <option value="">deploy to…</option>
          {envs.map((e) => (
            <option key={e}>{e}</option>
          ))}
        </select>
      </div>
      {pane.note && <p role="status">{pane.note}</p>}
    </section>
  );
}
