import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { membersApi, ROLES, type TeamScope } from "../../api/settings";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";
import { SettingsNav } from "./SettingsNav";
import { Denied, usePermissions } from "../../auth/permissions";

const SCOPES: { scope: TeamScope; label: string }[] = [
  { scope: "projects", label: "Project" },
  { scope: "workspaces", label: "Workspace" },
  { scope: "organizations", label: "Organization" },
];

export default function Members() {
  const { project, session } = useAuth();
  const qc = useQueryClient();
  const perms = usePermissions();
  const manage = perms.can("manage_members");
  const manageWhy = manage ? undefined : perms.why("manage_members", "change roles or remove members");
  const [scope, setScope] = useState<TeamScope>("projects");
  const targetId = scope === "projects" ? project?.id : scope === "workspaces" ? project?.workspace_id : project?.organization_id;
  const key = ["members", scope, targetId];
  const q = useQuery({ queryKey: key, queryFn: () => membersApi.list(scope, targetId!), enabled: !!targetId });
  const setRole = useMutation({
    mutationFn: (v: { userId: string; role: string }) => membersApi.setRole(scope, targetId!, v.userId, v.role),
    onSuccess: () => void qc.invalidateQueries({ queryKey: key }),
  });
  const remove = useMutation({
    mutationFn: (userId: string) => membersApi.remove(scope, targetId!, userId),
    onSuccess: () => void qc.invalidateQueries({ queryKey: key }),
  });
  const members = q.data?.members ?? [];
  // A role held at organization level reaches every project and workspace of it
  // (the organization's owner is owner everywhere) without a membership here:
  // such members are listed too, marked, their role changed at that level.
  const org = useQuery({
    queryKey: ["members", "organizations", project?.organization_id],
    queryFn: () => membersApi.list("organizations", project!.organization_id),
    enabled: scope !== "organizations" && !!project?.organization_id,
    retry: false,
  });
  const inherited = scope === "organizations" ? [] : (org.data?.members ?? []).filter((o) => !members.some((m) => m.user_id === o.user_id));
  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>Members and roles</h2>
      <div className="toolbar">
        <select aria-label="Scope" value={scope} onChange={(e) => setScope(e.target.value as TeamScope)}>
          {SCOPES.map((s) => (
            <option key={s.scope} value={s.scope}>
              {s.label}
            </option>
          ))}
        </select>
        <span className="muted mono">{targetId}</span>
        <span className="muted">Your role in this project: {project?.role}</span>
      </div>
      <Denied perm="manage_members" action="change roles or remove members" />
      <ErrorBox error={q.error} />
      <ErrorBox error={setRole.error} title="Role not changed" />
      <ErrorBox error={remove.error} title="Not removed" />
      <table className="grid" data-testid="members">
        <thead>
          <tr>
            <th>User</th>
            <th>Email</th>
            <th>Role</th>
            <th>Since</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.id}>
              <td>
                {m.name || m.username || "—"}
                {m.user_id === session?.user.id && <span className="badge">you</span>}
              </td>
              <td>{m.email}</td>
              <td>
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  disabled={setRole.isPending || !manage}
                  title={manageWhy}
                  onChange={(e) => setRole.mutate({ userId: m.user_id, role: e.target.value })}
                >
                  {/* Only an owner may make an owner: the others are not offered it. */}
                  {ROLES.filter((r) => r !== "owner" || perms.can("own") || m.role === "owner").map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              </td>
              <td>{m.created_at ? new Date(m.created_at).toLocaleDateString() : ""}</td>
              <td>
                <button
                  type="button"
                  className="danger"
                  disabled={!manage}
                  title={manageWhy}
                  onClick={() => window.confirm(`Remove ${m.email}?`) && remove.mutate(m.user_id)}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
          {inherited.map((m) => (
            <tr key={"org-" + m.id} data-inherited="organization">
              <td>
                {m.name || m.username || "—"}
                {m.user_id === session?.user.id && <span className="badge">you</span>}
              </td>
              <td>{m.email}</td>
              <td>
                <span aria-label={`Role of ${m.email}`}>{m.role}</span> <span className="badge" title="Held at organization level: change it under Organization.">from the organization</span>
              </td>
              <td>{m.created_at ? new Date(m.created_at).toLocaleDateString() : ""}</td>
              <td />
            </tr>
          ))}
          {q.isSuccess && members.length === 0 && inherited.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">
                No direct member at this level.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
