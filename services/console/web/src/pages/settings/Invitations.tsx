import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { invitationsApi, ROLES, type IssuedInvitation } from "../../api/settings";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";
import { SettingsNav } from "./SettingsNav";

export default function Invitations() {
  const { project } = useAuth();
  const ws = project?.workspace_id ?? "";
  const qc = useQueryClient();
  const key = ["invitations", ws];
  const q = useQuery({ queryKey: key, queryFn: () => invitationsApi.list(ws), enabled: !!ws });
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("editor");
  const [onlyThis, setOnlyThis] = useState(true);
  const [issued, setIssued] = useState<IssuedInvitation | null>(null);
  const done = (r: IssuedInvitation) => {
    setIssued(r);
    void qc.invalidateQueries({ queryKey: key });
  };
  const create = useMutation({
    mutationFn: () => invitationsApi.create(ws, { email, role, project_ids: onlyThis && project ? [project.id] : undefined }),
    onSuccess: (r) => {
      setEmail("");
      done(r);
    },
  });
  const resend = useMutation({ mutationFn: (id: string) => invitationsApi.resend(ws, id), onSuccess: done });
  const revoke = useMutation({ mutationFn: (id: string) => invitationsApi.revoke(ws, id), onSuccess: () => void qc.invalidateQueries({ queryKey: key }) });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setIssued(null);
    create.mutate();
  };
  const list = q.data?.invitations ?? [];
  // With a mail relay the gateway mails the link and never returns it.
  const link = issued?.accept_url ? new URL(issued.accept_url, window.location.origin).toString() : "";
  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>Invitations to the workspace</h2>
      <form className="toolbar card" onSubmit={submit} aria-label="Invite">
        <input aria-label="Email" type="email" required placeholder="name@example.com" value={email} onChange={(e) => setEmail(e.target.value)} />
        <select aria-label="Role" value={role} onChange={(e) => setRole(e.target.value)}>
          {ROLES.filter((r) => r !== "owner").map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
        <label className="inline">
          <input type="checkbox" checked={onlyThis} onChange={(e) => setOnlyThis(e.target.checked)} /> to {project?.name ?? "this project"} only
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          Invite
        </button>
      </form>
      <ErrorBox error={create.error} title="Not invited" />
      <ErrorBox error={resend.error} title="Not resent" />
      <ErrorBox error={revoke.error} title="Not revoked" />
      {issued && (
        <div className="notice ok" role="status">
          Invitation for <strong>{issued.invitation.email}</strong> (expires {new Date(issued.invitation.expires_at).toLocaleString()}).{" "}
          {link ? (
            <>
              Send them this link (shown once): <code className="secret">{link}</code>
            </>
          ) : issued.emailed ? (
            <>The link was mailed to them.</>
          ) : (
            <>The mail relay did not take the link: resend the invitation.</>
          )}
        </div>
      )}
      <ErrorBox error={q.error} />
      <table className="grid" data-testid="invitations">
        <thead>
          <tr>
            <th>Email</th>
            <th>Role</th>
            <th>Status</th>
            <th>Expires</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>
                <span className={`badge ${i.status === "accepted" ? "ok" : i.status === "expired" || i.status === "revoked" ? "error" : ""}`}>{i.status}</span>
              </td>
              <td>{new Date(i.expires_at).toLocaleString()}</td>
              <td>
                {(i.status === "pending" || i.status === "expired") && (
                  <>
                    <button type="button" onClick={() => resend.mutate(i.id)}>
                      Resend
                    </button>{" "}
                    <button type="button" className="danger" onClick={() => revoke.mutate(i.id)}>
                      Revoke
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
          {q.isSuccess && list.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">
                No invitation.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
