// /console/testsets: the project's testsets and an upload of a new one.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router";
import { listTestsets } from "../../api/testsets";
import { errorMessage } from "../../api/call";
import { Upload } from "./Upload";
import { Denied, usePermissions } from "../../auth/permissions";

export default function TestsetsPage() {
  const q = useQuery({ queryKey: ["testsets"], queryFn: listTestsets });
  const qc = useQueryClient();
  const nav = useNavigate();
  const perms = usePermissions();
  return (
    <div>
      <h1>Testsets</h1>
      <Denied perm="write" action="upload or edit testsets" />
      {perms.can("write") && (
      <details open={q.data?.length === 0}>
        <summary>Upload a testset</summary>
        <Upload
          onDone={(r) => {
            qc.invalidateQueries({ queryKey: ["testsets"] });
            nav(`/testsets/${r.testset.id}`);
          }}
        />
      </details>
      )}
      {q.isLoading && <p>Loading…</p>}
      {q.error && <p role="alert">{errorMessage(q.error)}</p>}
      <table data-testid="testsets-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Slug</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          {q.data?.map((t) => (
            <tr key={t.id}>
              <td>
                <Link to={`/testsets/${t.id}`}>{t.name || t.slug}</Link>
              </td>
              <td>{t.slug}</td>
              <td>{t.created_at?.slice(0, 19).replace("T", " ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {q.data?.length === 0 && <p>No testsets yet.</p>}
    </div>
  );
}
