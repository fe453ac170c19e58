// The diff of two testset revisions: rows added, removed and changed.
import { useQuery } from "@tanstack/react-query";
import { getRevision } from "../../api/testsets";
import { errorMessage } from "../../api/call";
import { diffRevisions, type PlacedRow, type RevisionDiff } from "./diff";
import { cellText } from "./Grid";
import "./Grid.css";

const SHOWN = 200;

export function DiffView({ before, after }: { before: string; after: string }) {
  const q = useQuery({
    queryKey: ["testset-diff", before, after],
    queryFn: async () => {
      const [a, b] = await Promise.all([getRevision(before), getRevision(after)]);
      return { a, b, diff: diffRevisions(a?.data?.testcases ?? [], b?.data?.testcases ?? []) };
    },
  });
  if (q.isLoading) return <p>Computing the diff…</p>;
  if (q.error) return <p role="alert">{errorMessage(q.error)}</p>;
  if (!q.data) return null;
  return (
    <section data-testid="diff">
      <h3>
        Version {q.data.a?.version} → {q.data.b?.version}
      </h3>
      <DiffTables diff={q.data.diff} />
    </section>
  );
}

export function DiffTables({ diff }: { diff: RevisionDiff }) {
  const cols = (n: number, what: string, names: string[]) =>
    n === 0 ? "" : `${n} column${n === 1 ? "" : "s"} ${what} (${names.join(", ")}); `;
  return (
    <div>
      <p data-testid="diff-summary">
        {cols(diff.columnsAdded.length, "added", diff.columnsAdded)}
        {cols(diff.columnsRemoved.length, "removed", diff.columnsRemoved)}
        {diff.added.length} added, {diff.removed.length} removed, {diff.changed.length} changed, {diff.unchanged} unchanged rows
      </p>
      {diff.added.length > 0 && <RowsTable title="Added" color="#e8ffe8" rows={diff.added.slice(0, SHOWN)} />}
      {diff.removed.length > 0 && <RowsTable title="Removed" color="#ffecec" rows={diff.removed.slice(0, SHOWN)} />}
      {diff.changed.length > 0 && (
        <table data-testid="diff-changed" className="tsdiff">
          <caption>Changed</caption>
          <thead>
            <tr>
              <th>row</th>
              <th>column</th>
              <th>before</th>
              <th>after</th>
            </tr>
          </thead>
          <tbody>
            {diff.changed.slice(0, SHOWN).flatMap((c) =>
              c.columns.map((col, i) => (
                <tr key={c.key + col}>
                  <td>{i === 0 ? rowLabel(c.row, c.name) : ""}</td>
                  <td>{col}</td>
                  <td style={{ background: "#ffecec" }}>{cellText(c.before.data[col])}</td>
                  <td style={{ background: "#e8ffe8" }}>{cellText(c.after.data[col])}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
      {Math.max(diff.added.length, diff.removed.length, diff.changed.length) > SHOWN && <p>Only the first {SHOWN} rows of each list are shown.</p>}
    </div>
  );
}

/** rowLabel names a row for a person: its position and first column value. */
function rowLabel(row: number, name: string): string {
  return name ? `row ${row} · ${name}` : `row ${row}`;
}

function RowsTable({ title, color, rows }: { title: string; color: string; rows: PlacedRow[] }) {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r.data)))].filter((c) => c !== "testcase_dedup_id");
  return (
    <table data-testid={`diff-${title.toLowerCase()}`} className="tsdiff" style={{ background: color }}>
      <caption>{title}</caption>
      <thead>
        <tr>
          <th>row</th>
          {cols.map((c) => (
            <th key={c}>{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.row}>
            <td>{r.row}</td>
            {cols.map((c) => (
              <td key={c}>{cellText(r.data[c])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
