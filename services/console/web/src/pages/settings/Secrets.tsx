import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { secretsApi, type Secret } from "../../api/settings";
import { testProvider, type ProviderCheck } from "../../api/models";
import { errorMessage } from "../../api/call";
import { ErrorBox, fieldErrors } from "../../components/ErrorBox";
import { SettingsNav } from "./SettingsNav";
import { Denied, usePermissions } from "../../auth/permissions";

const PROVIDERS = ["openai", "anthropic", "gemini", "mistral", "groq", "together_ai", "openrouter", "cohere", "deepinfra", "perplexityai"];

export default function Secrets() {
  const qc = useQueryClient();
  const perms = usePermissions();
  const q = useQuery({ queryKey: ["secrets"], queryFn: secretsApi.list });
  const [kind, setKind] = useState<"provider_key" | "custom_provider">("provider_key");
  const [name, setName] = useState("");
  const [provider, setProvider] = useState("openai");
  const [key, setKey] = useState("");
  const [url, setUrl] = useState("");
  const [slug, setSlug] = useState("");
  const [models, setModels] = useState("");
  // The secret being edited (the form fills from it), or none: the form adds.
  const [editing, setEditing] = useState<Secret | null>(null);
  const reset = () => {
    setEditing(null);
    setKind("provider_key");
    setName("");
    setProvider("openai");
    setKey("");
    setUrl("");
    setSlug("");
    setModels("");
  };
  const edit = (s: Secret) => {
    setEditing(s);
    setKind(s.kind === "custom_provider" ? "custom_provider" : "provider_key");
    setName(s.header?.name ?? "");
    setProvider(s.kind === "provider_key" ? s.data?.kind || "openai" : "openai");
    setKey("");
    setUrl(s.data?.provider?.url ?? "");
    setSlug(s.data?.provider_slug ?? "");
    setModels((s.data?.models ?? []).map((m) => m.slug).join(", "));
  };
  const create = useMutation({
    mutationFn: () => {
      const header = name ? { name } : undefined;
      // The key is write-only: left empty while editing, it is not sent
      // and the stored key stays.
      const keyPart = key ? { key } : {};
      const body =
        kind === "provider_key"
          ? { header, secret: { kind, data: { kind: provider, provider: keyPart } } }
          : {
              header,
              secret: {
                kind,
                data: {
                  kind: "custom",
                  provider: { url, ...keyPart },
                  models: models
                    .split(",")
                    .map((m) => m.trim())
                    .filter(Boolean)
                    .map((m) => ({ slug: m })),
                  provider_slug: slug || undefined,
                },
              },
            };
      return editing ? secretsApi.update(editing.id, body) : secretsApi.create(body);
    },
    onSuccess: () => {
      // A saved form starts empty: values left in it read as not saved,
      // and a second Add would create a duplicate.
      reset();
      void qc.invalidateQueries({ queryKey: ["secrets"] });
      void qc.invalidateQueries({ queryKey: ["model-providers"] });
    },
  });
  const remove = useMutation({ mutationFn: secretsApi.remove, onSuccess: () => void qc.invalidateQueries({ queryKey: ["secrets"] }) });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const fe = (f: string) => fieldErrors(create.error, f).map((m, i) => (
    <span key={i} className="field-error">
      {m}
    </span>
  ));
  const list = q.data ?? [];
  if (!perms.can("manage_keys")) {
    return (
      <section>
        <h1>Settings</h1>
        <SettingsNav />
        <h2>Provider secrets</h2>
        <Denied perm="manage_keys" action="see or add provider secrets" />
      </section>
    );
  }
  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>Provider secrets</h2>
      <p className="muted">Keys are stored sealed and never shown again; the runtime uses them to call the providers.</p>
      <form className="card secret-form" onSubmit={submit} aria-label={editing ? "Edit a secret" : "Add a secret"}>
        {editing && (
          <p className="muted" role="status">
            Editing <b>{editing.header?.name || editing.slug}</b>. Leave the key empty to keep the stored one.
          </p>
        )}
        <div className="toolbar">
          <select aria-label="Secret kind" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="provider_key">Provider key</option>
            <option value="custom_provider">Custom provider (Ollama, vLLM, Azure, a proxy)</option>
          </select>
          <input aria-label="Secret name" placeholder="name (optional)" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        {kind === "provider_key" ? (
          <div className="toolbar">
            <select aria-label="Provider" value={provider} onChange={(e) => setProvider(e.target.value)}>
              {PROVIDERS.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
            <input
              aria-label="Provider key"
              type="password"
              placeholder={editing ? "new key (empty: keep the stored key)" : "sk-…"}
              required={!editing}
              value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
            {fe("key")}
          </div>
        ) : (
          <div className="toolbar">
            <input aria-label="Provider URL" placeholder="http://127.0.0.1:11434/v1" required value={url} onChange={(e) => setUrl(e.target.value)} />
            {fe("url")}
            <input aria-label="Provider slug" placeholder="slug (my-ollama)" value={slug} onChange={(e) => setSlug(e.target.value)} />
            <input aria-label="Models" placeholder="models: llama3, qwen2" value={models} onChange={(e) => setModels(e.target.value)} />
            <input
              aria-label="Provider key"
              type="password"
              placeholder={editing ? "new key (empty: keep the stored key)" : "key (optional)"}
              value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
          </div>
        )}
        <button type="submit" className="primary" disabled={create.isPending}>
          {editing ? "Save secret" : "Add secret"}
        </button>
        {editing && (
          <button type="button" onClick={reset}>
            Cancel
          </button>
        )}
      </form>
      {create.isSuccess && !editing && (
        <p className="ok" role="status" data-testid="secret-saved">
          Saved {create.data?.header?.name || create.data?.slug}.
        </p>
      )}
      <ErrorBox error={create.error} title="Not saved" />
      <ErrorBox error={q.error} />
      <ErrorBox error={remove.error} title="Not deleted" />
      <table className="grid" data-testid="secrets">
        <thead>
          <tr>
            <th>Name</th>
            <th>Slug</th>
            <th>Kind</th>
            <th>Provider</th>
            <th>Created</th>
            <th>Connection</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((s) => (
            <tr key={s.id}>
              <td>{s.header?.name ?? "—"}</td>
              <td className="mono">{s.slug}</td>
              <td>{s.kind === "provider_key" ? "provider key" : "custom provider"}</td>
              <td>
                {s.data?.kind}
                {s.data?.provider?.url && <span className="muted mono"> {s.data.provider.url}</span>}
                {s.data?.models && s.data.models.length > 0 && <span className="muted"> · {s.data.models.map((m) => m.slug).join(", ")}</span>}
              </td>
              <td>{s.created_at ? new Date(s.created_at).toLocaleString() : ""}</td>
              <td>
                <TestConnection secret={s} />
              </td>
              <td style={{ whiteSpace: "nowrap" }}>
                <button type="button" onClick={() => edit(s)} aria-label={`Edit ${s.slug}`}>
                  Edit
                </button>{" "}
                <button
                  type="button"
                  className="danger"
                  onClick={() => window.confirm(`Delete secret ${s.slug}?`) && remove.mutate(s.id)}
                  aria-label={`Delete ${s.slug}`}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {q.isSuccess && list.length === 0 && (
            <tr>
              <td colSpan={7} className="muted">
                No secret yet.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}

/** The name the runtime knows a secret by: a custom provider's
 * provider_slug (the prefix of its models), else the secret's slug. */
function providerName(s: Secret): string {
  return (s.kind === "custom_provider" ? s.data?.provider_slug : undefined) || s.slug || s.id;
}

/** TestConnection asks the runtime to make one cheap call (its model list)
 * to the provider, through the egress policy calls go through, and shows
 * ok or the provider's error. */
function TestConnection({ secret }: { secret: Secret }) {
  const name = providerName(secret);
  const [state, setState] = useState<{ running?: boolean; check?: ProviderCheck; error?: string }>({});
  return (
    <span data-testid={`test-${name}`}>
      <button
        type="button"
        aria-label={`Test connection of ${name}`}
        disabled={state.running}
        onClick={async () => {
          setState({ running: true });
          try {
            setState({ check: await testProvider(name) });
          } catch (e) {
            setState({ error: errorMessage(e) });
          }
        }}
      >
        {state.running ? "Testing…" : "Test connection"}
      </button>{" "}
      {state.check?.ok && (
        <span className="ok" role="status">
          ✓ Connected ({state.check.models ?? 0} model{state.check.models === 1 ? "" : "s"} listed, {state.check.latency_ms} ms)
        </span>
      )}
      {state.check && !state.check.ok && (
        <span className="field-error" role="alert">
          ✗ {state.check.status ? `HTTP ${state.check.status}: ` : ""}
          {state.check.error}
        </span>
      )}
      {state.error && (
        <span className="field-error" role="alert">
          ✗ {state.error}
        </span>
      )}
    </span>
  );
}
