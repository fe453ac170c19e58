import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { keysApi, ROLES, type ApiKey } from "../../api/settings";
import { ErrorBox } from "../../components/ErrorBox";
import { useAuth } from "../../auth/AuthContext";
import { SettingsNav } from "./SettingsNav";
import { Denied, usePermissions } from "../../auth/permissions";

export default function Keys() {
  const qc = useQueryClient();
  const { project } = useAuth();
  const perms = usePermissions();
  const q = useQuery({ queryKey: ["keys"], queryFn: keysApi.list });
  const [name, setName] = useState("");
  const [role, setRole] = useState("");
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<ApiKey | null>(null);
  const create = useMutation({
    mutationFn: () =>
      keysApi.create({ name: name || undefined, role: role || undefined, expires_at: expires ? new Date(expires).toISOString() : undefined }),
    onSuccess: (r) => {
      setCreated(r.api_key);
      setName("");
      void qc.invalidateQueries({ queryKey: ["keys"] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => keysApi.revoke(id),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["keys"] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const keys = q.data?.api_keys ?? [];
  if (!perms.can("manage_keys")) {
    return (
      <section>
        <h1>Settings</h1>
        <SettingsNav />
        <h2>API keys of {project?.name ?? "this project"}</h2>
        <Denied perm="manage_keys" action="see or create the project's API keys" />
      </section>
    );
  }
  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>API keys of {project?.name ?? "this project"}</h2>
      <form className="toolbar card" onSubmit={submit} aria-label="Create a key">
        <input aria-label="Key name" placeholder="name (optional)" value={name} onChange={(e) => setName(e.target.value)} />
        <select aria-label="Key role" value={role} onChange={(e) => setRole(e.target.value)}>
          <option value="">role: mine</option>
          {ROLES.filter((r) => r !== "owner").map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <label className="inline">
          expires
          <input aria-label="Expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
      </form>
      <ErrorBox error={create.error} title="Not created" />
      {created?.key && (
        <div className="notice ok new-key" role="status" data-testid="new-key">
          <p>
            Key <strong>{created.name ?? created.prefix}</strong> created. Copy it now: it is shown only once.
          </p>
          <code className="secret" data-testid="new-key-value">
            {created.key}
          </code>{" "}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(created.key!)}>
            Copy
          </button>{" "}
          <button type="button" className="link" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <ErrorBox error={q.error} />
      <ErrorBox error={revoke.error} title="Not revoked" />
      <table className="grid" data-testid="keys">
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Role</th>
            <th>Created</th>
            <th>Expires</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-key={k.prefix}>
              <td>{k.name ?? <span className="muted">—</span>}</td>
              <td className="mono">{k.prefix}</td>
              <td>{k.role ?? <span className="muted">creator's</span>}</td>
              <td>{new Date(k.created_at).toLocaleString()}</td>
              <td>{k.expires_at ? new Date(k.expires_at).toLocaleString() : "never"}</td>
              <td>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Revoke ${k.name ?? k.prefix}`}
                  disabled={revoke.isPending}
                  onClick={() => {
                    if (window.confirm(`Revoke key ${k.name ?? k.prefix}? Clients using it stop working.`)) revoke.mutate(k.id);
                  }}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
          {q.isSuccess && keys.length === 0 && (
            <tr>
              <td colSpan={6} className="muted">
                No key yet.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
