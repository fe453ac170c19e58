// /console/apps/:id — an application's variants and their revisions, the
// environments and what each has deployed, deploy, and the diff of two
// revisions' parameters.
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { appRevisions, deploy, forkVariant, getApp, listAppVariants, listEnvironments, type AppRevision, type Environment } from "../../api/apps";
import { usePermissions } from "../../auth/permissions";
import { ErrorBox } from "../../components/ErrorBox";
import { diffParams } from "./paramdiff";
import { variantLabel } from "../../lib/stepNames";

export default function AppPage() {
  const { id = "" } = useParams();
  const qc = useQueryClient();
  const app = useQuery({ queryKey: ["app", id], queryFn: () => getApp(id) });
  const variants = useQuery({ queryKey: ["app-variants", id], queryFn: () => listAppVariants(id) });
  const revs = useQuery({ queryKey: ["app-revisions", id], queryFn: () => appRevisions(id) });
  const envs = useQuery({ queryKey: ["environments"], queryFn: listEnvironments });
  const [pick, setPick] = useState<string[]>([]);
  const [err, setErr] = useState<unknown>(null);
  const perms = usePermissions();
  const [branchFrom, setBranchFrom] = useState<AppRevision | null>(null);
  const [branched, setBranched] = useState("");

  const byVariant = new Map<string, AppRevision[]>();
  for (const r of revs.data ?? []) {
    const l = byVariant.get(r.application_variant_id) ?? [];
    l.push(r);
    byVariant.set(r.application_variant_id, l);
  }
  for (const l of byVariant.values()) l.sort((a, b) => Number(b.version) - Number(a.version));
  const toggle = (rid: string) => setPick((p) => (p.includes(rid) ? p.filter((x) => x !== rid) : [...p, rid].slice(-2)));
  const picked = pick.map((p) => revs.data?.find((r) => r.id === p)).filter(Boolean) as AppRevision[];

  const doDeploy = async (rid: string, env: string) => {
    setErr(null);
    try {
      await deploy(rid, env, "deployed from the console");
      await qc.invalidateQueries({ queryKey: ["environments"] });
    } catch (e) {
      setErr(e);
    }
  };

  return (
    <div>
      <h1>{app.data?.name || app.data?.slug || "Application"}</h1>
      <p>
        <Link to={`/playground?app=${id}`}>Open in the playground</Link>
      </p>
      <ErrorBox error={app.error || revs.error || err} />
      <h2>Environments</h2>
      <EnvTable envs={envs.data ?? []} appRevisions={revs.data ?? []} />
      <h2>Variants and revisions</h2>
      {branched && (
        <div className="notice ok" role="status">
          {branched}
        </div>
      )}
      {branchFrom && (
        <BranchForm
          from={branchFrom}
          fromLabel={`${variants.data?.find((v) => v.id === branchFrom.application_variant_id)?.name ?? "variant"} v${branchFrom.version}`}
          onDone={(msg) => {
            setBranchFrom(null);
            setBranched(msg);
            void qc.invalidateQueries({ queryKey: ["app-variants", id] });
            void qc.invalidateQueries({ queryKey: ["app-revisions", id] });
          }}
          onCancel={() => setBranchFrom(null)}
        />
      )}
      {variants.data?.map((v) => (
        <section key={v.id}>
          <h3>{v.name || v.slug}</h3>
          <table>
            <thead>
              <tr>
                <th>diff</th>
                <th>Version</th>
                <th>Message</th>
                <th>Model</th>
                <th>Date</th>
                <th>Deploy</th>
                {perms.can("write") && <th>Branch</th>}
              </tr>
            </thead>
            <tbody>
              {(byVariant.get(v.id) ?? []).map((r) => (
                <tr key={r.id}>
                  <td>
                    <input type="checkbox" aria-label={`pick ${v.slug} v${r.version}`} checked={pick.includes(r.id)} onChange={() => toggle(r.id)} />
                  </td>
                  <td>{r.version}</td>
                  <td>{r.message}</td>
                  <td>{r.data?.parameters?.prompt?.llm_config?.model}</td>
                  <td>{r.created_at?.slice(0, 19).replace("T", " ")}</td>
                  <td>
                    {r.data?.uri && (
                      <select aria-label={`deploy v${r.version}`} value="" onChange={(e) => e.currentTarget.value && doDeploy(r.id, e.currentTarget.value)}>
                        <option value="">to…</option>
                        {envs.data?.map((en) => (
                          <option key={en.id} value={en.slug}>
                            {en.name || en.slug}
                          </option>
                        ))}
                      </select>
                    )}
                  </td>
                  {perms.can("write") && (
                    <td>
                      <button
                        type="button"
                        aria-label={`new variant from ${v.name || v.slug} v${r.version}`}
                        onClick={() => {
                          setBranched("");
                          setBranchFrom(r);
                        }}
                      >
                        New variant…
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
      {picked.length === 2 && <ParamDiff a={picked[0]} b={picked[1]} />}
      {picked.length < 2 && <p>Pick two revisions to compare their parameters.</p>}
    </div>
  );
}

function EnvTable({ envs, appRevisions }: { envs: Environment[]; appRevisions: AppRevision[] }) {
  const ids = new Set(appRevisions.map((r) => r.id));
  return (
    <table data-testid="environments">
      <thead>
        <tr>
          <th>Environment</th>
          <th>Deployed revision</th>
        </tr>
      </thead>
      <tbody>
        {envs.map((e) => {
          const dep = Object.values(e.data?.references ?? {})
            .map((g) => g.application_revision)
            .find((r) => r?.id && ids.has(r.id));
          const rev = dep && appRevisions.find((r) => r.id === dep.id);
          return (
            <tr key={e.id}>
              <td>{e.name || e.slug}</td>
              <td>{rev ? `${variantLabel(rev.application_variant_slug)} v${rev.version}` : "—"}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function ParamDiff({ a, b }: { a: AppRevision; b: AppRevision }) {
  const [x, y] = Number(a.version) <= Number(b.version) && a.application_variant_id === b.application_variant_id ? [a, b] : [a, b];
  const changes = diffParams(x.data?.parameters, y.data?.parameters);
  return (
    <section data-testid="param-diff">
      <h3>
        Parameters: v{x.version} → v{y.version}
      </h3>
      {changes.length === 0 && <p>The parameters are the same.</p>}
      <table>
        <tbody>
          {changes.map((c) => (
            <tr key={c.path}>
              <td>
                <code>{c.path}</code>
              </td>
              <td style={{ background: c.kind !== "added" ? "#ffecec" : undefined }}>{c.kind !== "added" && JSON.stringify(c.before)}</td>
              <td style={{ background: c.kind !== "removed" ? "#e8ffe8" : undefined }}>{c.kind !== "removed" && JSON.stringify(c.after)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** variantSlug makes a slug from the name typed (letters, digits, - _ .). */
function variantSlug(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * A new variant from a revision (POST /api/applications/variants/fork): it
 * starts with that revision's parameters and history, and later commits to
 * either variant leave the other alone.
 */
function BranchForm({ from, fromLabel, onDone, onCancel }: { from: AppRevision; fromLabel: string; onDone: (msg: string) => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const fork = useMutation({
    mutationFn: async () => {
      const r = await forkVariant(variantSlug(name), from, name.trim());
      return r.application_variant;
    },
    onSuccess: (v) => onDone(`Variant ${v?.name ?? name} created from ${fromLabel}.`),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    fork.mutate();
  };
  return (
    <form className="toolbar card" aria-label="New variant" onSubmit={submit}>
      <strong>New variant from {fromLabel}</strong>
      <input aria-label="Variant name" placeholder="name" value={name} autoFocus onChange={(e) => setName(e.target.value)} />
      <button type="submit" className="primary" disabled={!variantSlug(name) || fork.isPending}>
        Create variant
      </button>
      <button type="button" className="link" onClick={onCancel}>
        Cancel
      </button>
      <ErrorBox error={fork.error} title="Variant not created" />
    </form>
  );
}
