// /console/testsets/:id — a revision's rows in the virtualised grid,
// edited in place and committed with a message; the revision history with
// a diff of two revisions; download; upload of a new revision.
import { useEffect, useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useParams, useSearchParams } from "react-router";
import { commitDelta, download, getRevision, getTestset, history, latestRevision, type TestsetRevision } from "../../api/testsets";
import { errorMessage } from "../../api/call";
import { Grid } from "./Grid";
import { addColumn, addRow, editCell, removeColumn, removeRows, renameColumn, startWork, toDelta, type Work } from "./edit";
import { DiffView } from "./DiffView";
import { Upload } from "./Upload";

export default function TestsetPage() {
  const { id = "" } = useParams();
  const [sp, setSp] = useSearchParams();
  const revParam = sp.get("revision");
  const qc = useQueryClient();
  const ts = useQuery({ queryKey: ["testset", id], queryFn: () => getTestset(id) });
  const rev = useQuery({
    queryKey: ["testset-revision", id, revParam ?? "latest"],
    queryFn: () => (revParam ? getRevision(revParam) : latestRevision(id)),
  });
  const hist = useQuery({
    queryKey: ["testset-history", rev.data?.testset_variant_id],
    queryFn: () => history(rev.data!.testset_variant_id),
    enabled: !!rev.data?.testset_variant_id,
  });

  const [work, setWork] = useState<Work | null>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [message, setMessage] = useState("");
  const [newCol, setNewCol] = useState("");
  const [status, setStatus] = useState<string | null>(null);
  const [diffPair, setDiffPair] = useState<[string, string] | null>(null);

  useEffect(() => {
    if (rev.data) {
      setWork(startWork(rev.data.data?.testcases ?? []));
      setSelected(new Set());
    }
  }, [rev.data]);

  const delta = useMemo(() => (work ? toDelta(work) : null), [work]);
  const gridRows = useMemo(() => work?.rows.map((r) => r.data) ?? [], [work]);
  const marks = useMemo(() => {
    const m = new Map<number, "added" | "changed">();
    work?.rows.forEach((r, i) => {
      if (!r.baseId) m.set(i, "added");
      else if (r.edited) m.set(i, "changed");
    });
    return m;
  }, [work]);

  const commit = async () => {
    if (!rev.data || !delta) return;
    setStatus("Committing…");
    try {
      const r = await commitDelta(rev.data, delta, message || "Edited in the console");
      setMessage("");
      setStatus(`Committed version ${r.version}.`);
      await qc.invalidateQueries({ queryKey: ["testset-history"] });
      setSp({ revision: r.id });
    } catch (e) {
      setStatus(errorMessage(e));
    }
  };

  const r = rev.data;
  return (
    <div>
      <h1>{ts.data?.name || ts.data?.slug || "Testset"}</h1>
      {ts.data?.slug && (
        <p data-testid="testset-slug" style={{ color: "#666", marginTop: -8 }}>
          Slug <code>{ts.data.slug}</code> · from the CLI: <code>assay testsets pull {ts.data.slug}</code>
        </p>
      )}
      {rev.error && <p role="alert">{errorMessage(rev.error)}</p>}
      {r && (
        <p data-testid="revision-info">
          Version {r.version} · {r.data?.testcase_ids?.length ?? 0} rows · {r.message}{" "}
          <button onClick={() => download(r.id, "csv", ts.data?.slug ?? `revision_${r.id}`)}>Download CSV</button>{" "}
          <button onClick={() => download(r.id, "json", ts.data?.slug ?? `revision_${r.id}`)}>Download JSON</button>
        </p>
      )}
      {rev.isLoading && <p>Loading rows…</p>}
      {work && (
        <>
          <div className="toolbar" style={{ display: "flex", gap: 8, flexWrap: "wrap", margin: "8px 0" }}>
            <button onClick={() => setWork(addRow(work))}>Add row</button>
            <button disabled={selected.size === 0} onClick={() => (setWork(removeRows(work, selected)), setSelected(new Set()))}>
              Remove {selected.size || ""} row{selected.size === 1 ? "" : "s"}
            </button>
            <input placeholder="new column" value={newCol} onChange={(e) => setNewCol(e.currentTarget.value)} aria-label="new column name" />
            <button onClick={() => (setWork(addColumn(work, newCol.trim())), setNewCol(""))} disabled={!newCol.trim()}>
              Add column
            </button>
            <ColumnMenu work={work} onRemove={(c) => setWork(removeColumn(work, c))} onRename={(a, b) => setWork(renameColumn(work, a, b))} />
          </div>
          <Grid
            columns={work.columns.map((c) => c.name)}
            rows={gridRows}
            editable
            selected={selected}
            marks={marks}
            onToggle={(i) =>
              setSelected((s) => {
                const n = new Set(s);
                if (n.has(i)) n.delete(i);
                else n.add(i);
                return n;
              })
            }
            onEdit={(row, col, v) => setWork(editCell(work, row, col, v))}
          />
          <div style={{ margin: "8px 0", display: "flex", gap: 8 }}>
            <input
              placeholder="commit message"
              value={message}
              onChange={(e) => setMessage(e.currentTarget.value)}
              aria-label="commit message"
              style={{ flex: 1 }}
            />
            <button disabled={!delta} onClick={commit} data-testid="commit">
              Commit
            </button>
            <button disabled={!delta} onClick={() => r && setWork(startWork(r.data?.testcases ?? []))}>
              Discard
            </button>
          </div>
          {delta && (
            <small data-testid="pending">
              Pending: {delta.rows?.add?.length ?? 0} added, {delta.rows?.remove?.length ?? 0} removed, {delta.rows?.replace?.length ?? 0} edited rows;{" "}
              {(delta.columns?.add?.length ?? 0) + (delta.columns?.remove?.length ?? 0) + (delta.columns?.replace?.length ?? 0)} column changes
            </small>
          )}
          {status && <p role="status">{status}</p>}
        </>
      )}
      <h2>History</h2>
      <History revisions={hist.data ?? []} current={r} onOpen={(rid) => setSp({ revision: rid })} onDiff={(a, b) => setDiffPair([a, b])} />
      {diffPair && <DiffView before={diffPair[0]} after={diffPair[1]} />}
      <details>
        <summary>Upload a new revision</summary>
        <Upload
          testsetId={id}
          onDone={() => {
            qc.invalidateQueries({ queryKey: ["testset-history"] });
            qc.invalidateQueries({ queryKey: ["testset-revision", id] });
            setSp({});
          }}
        />
      </details>
    </div>
  );
}

function ColumnMenu({ work, onRemove, onRename }: { work: Work; onRemove: (c: string) => void; onRename: (a: string, b: string) => void }) {
  const [col, setCol] = useState("");
  const [to, setTo] = useState("");
  return (
    <span>
      <select value={col} onChange={(e) => setCol(e.currentTarget.value)} aria-label="column">
        <option value="">column…</option>
        {work.columns.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>{" "}
      <button disabled={!col} onClick={() => (onRemove(col), setCol(""))}>
        Remove column
      </button>{" "}
      <input placeholder="rename to" value={to} onChange={(e) => setTo(e.currentTarget.value)} aria-label="rename column to" />{" "}
      <button disabled={!col || !to.trim()} onClick={() => (onRename(col, to.trim()), setCol(""), setTo(""))}>
        Rename
      </button>
    </span>
  );
}

/** shownHistory is the history a person reads, oldest first. A create
 * writes an empty v0 ("Initial commit", no rows) before the version with
 * the rows, as the compatible API does and its clients expect; the upload
 * is one version to the user, so the empty v0 is left out here (the API
 * still lists it). */
export function shownHistory(revisions: TestsetRevision[]): TestsetRevision[] {
  const sorted = [...revisions].sort((a, b) => Number(a.version) - Number(b.version));
  return sorted.filter((r, i) => !(i === 0 && sorted.length > 1 && Number(r.version) === 0 && !r.data?.testcase_ids?.length));
}

function History({
  revisions,
  current,
  onOpen,
  onDiff,
}: {
  revisions: TestsetRevision[];
  current?: TestsetRevision;
  onOpen: (id: string) => void;
  onDiff: (before: string, after: string) => void;
}) {
  const [pick, setPick] = useState<string[]>([]);
  const toggle = (id: string) => setPick((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  const sorted = shownHistory(revisions);
  return (
    <div>
      <table data-testid="history">
        <thead>
          <tr>
            <th>compare</th>
            <th>Version</th>
            <th>Message</th>
            <th>Date</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {[...sorted].reverse().map((h) => (
            <tr key={h.id} style={h.id === current?.id ? { fontWeight: 600 } : undefined}>
              <td>
                <input type="checkbox" aria-label={`pick version ${h.version}`} checked={pick.includes(h.id)} onChange={() => toggle(h.id)} />
              </td>
              <td>{h.version}</td>
              <td>{h.message}</td>
              <td>{h.created_at?.slice(0, 19).replace("T", " ")}</td>
              <td>
                <button onClick={() => onOpen(h.id)}>Open</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button
        disabled={pick.length !== 2}
        onClick={() => {
          const [a, b] = pick.map((id) => sorted.findIndex((s) => s.id === id));
          onDiff(sorted[Math.min(a, b)].id, sorted[Math.max(a, b)].id);
        }}
      >
        Diff the two picked versions
      </button>
    </div>
  );
}
