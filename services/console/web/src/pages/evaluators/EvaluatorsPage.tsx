// /console/evaluators — the catalog (templates and their presets) and the
// project's evaluators.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { listEvaluators, presets, templates, uriKey } from "../../api/evaluators";
import { ErrorBox } from "../../components/ErrorBox";

export default function EvaluatorsPage() {
  const ev = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const tpl = useQuery({ queryKey: ["evaluator-templates"], queryFn: templates });
  const [open, setOpen] = useState<string | null>(null);
  const pre = useQuery({ queryKey: ["evaluator-presets", open], queryFn: () => presets(open!), enabled: !!open });
  return (
    <div>
      <h1>Evaluators</h1>
      <ErrorBox error={ev.error || tpl.error} />
      <h2>In this project</h2>
      <table data-testid="evaluators-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Template</th>
            <th>Slug</th>
          </tr>
        </thead>
        <tbody>
          {ev.data?.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={`/evaluators/${e.id}`}>{e.name || e.slug}</Link>
              </td>
              <td>{uriKey(e.data?.uri) ?? "custom"}</td>
              <td>{e.slug}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Catalog</h2>
      <div style={{ display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(260px, 1fr))", gap: 10 }} data-testid="catalog">
        {tpl.data?.map((t) => (
          <div key={t.key} style={{ border: "1px solid #ddd", borderRadius: 4, padding: 8 }}>
            <strong>{t.name || t.key}</strong> <small>{t.categories?.join(", ")}</small>
            <p style={{ fontSize: 13 }}>{t.description}</p>
            <Link to={`/evaluators/new?template=${encodeURIComponent(t.key)}`}>Create from template</Link>{" "}
            <button onClick={() => setOpen(open === t.key ? null : t.key)}>Presets</button>
            {open === t.key && (
              <ul>
                {pre.isLoading && <li>Loading…</li>}
                {pre.data?.length === 0 && <li>No presets.</li>}
                {pre.data?.map((p) => (
                  <li key={p.key}>
                    <Link to={`/evaluators/new?template=${encodeURIComponent(t.key)}&preset=${encodeURIComponent(p.key)}`}>{p.name || p.key}</Link>
                  </li>
                ))}
              </ul>
            )}
          </div>
        ))}
      </div>
    </div>
  );
}
