// /console/apps: the project's applications, and a new one from the
// completion or chat template with a first prompt.
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router";
import { createApp, listApps } from "../../api/apps";
import { ErrorBox } from "../../components/ErrorBox";
import { slugOf } from "../../lib/slug";

export default function AppsPage() {
  const q = useQuery({ queryKey: ["apps"], queryFn: listApps });
  const qc = useQueryClient();
  const nav = useNavigate();
  const [name, setName] = useState("");
  const [template, setTemplate] = useState<"completion" | "chat">("completion");
  const [system, setSystem] = useState("You are a concise assistant.");
  const [user, setUser] = useState("What is the capital of {{country}}?");
  const [err, setErr] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const create = async () => {
    setBusy(true);
    setErr(null);
    try {
      const r = await createApp(name.trim(), template, {
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
        template_format: "curly",
        llm_config: { model: "gpt-4o-mini" },
      });
      await qc.invalidateQueries({ queryKey: ["apps"] });
      if (r.application) nav(`/apps/${r.application.id}`);
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div>
      <h1>Applications</h1>
      <details open={q.data?.length === 0}>
        <summary>New application</summary>
        <div style={{ display: "grid", gap: 6, maxWidth: 640 }}>
          <input placeholder="name" value={name} onChange={(e) => setName(e.currentTarget.value)} aria-label="application name" />
          {slugOf(name) && (
            <small data-testid="slug-preview">
              slug <code>{slugOf(name)}</code> (what the CLI and SDK call it; a number is added if another application has it)
            </small>
          )}
          <select value={template} onChange={(e) => setTemplate(e.currentTarget.value as "completion" | "chat")} aria-label="template">
            <option value="completion">completion</option>
            <option value="chat">chat</option>
          </select>
          <textarea value={system} onChange={(e) => setSystem(e.currentTarget.value)} aria-label="system message" rows={2} />
          <textarea value={user} onChange={(e) => setUser(e.currentTarget.value)} aria-label="user message" rows={2} />
          <button disabled={!slugOf(name) || busy} onClick={create} data-testid="create-app">
            Create
          </button>
          <ErrorBox error={err} />
        </div>
      </details>
      <ErrorBox error={q.error} />
      <table data-testid="apps-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Slug</th>
            <th>Created</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {q.data?.map((a) => (
            <tr key={a.id}>
              <td>
                <Link to={`/apps/${a.id}`}>{a.name || a.slug}</Link>
              </td>
              <td>{a.slug}</td>
              <td>{a.created_at?.slice(0, 19).replace("T", " ")}</td>
              <td>
                <Link to={`/playground?app=${a.id}`}>Playground</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
