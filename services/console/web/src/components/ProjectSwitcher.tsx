import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "react-router";
import { structureApi } from "../api/structure";
import type { SessionProject } from "../api/types";
import { useAuth } from "../auth/AuthContext";

// The last entry of the switcher leads to where projects are made.
const NEW_PROJECT = "__new_project__";

/** Picks the project every request is scoped to, among the session's projects. */
export function ProjectSwitcher() {
  const { session, projectId, setProject } = useAuth();
  const navigate = useNavigate();
  const projects = session?.projects ?? [];
  // Names only where two projects share one: every organization has its
  // "Default" project, so a second organization makes two "Default"s.
  const ambiguous = new Set(projects.map((p) => p.name).filter((n, i, all) => all.indexOf(n) !== i));
  const orgs = useQuery({ queryKey: ["structure", "organizations"], queryFn: structureApi.organizations, enabled: ambiguous.size > 0 });
  const wss = useQuery({ queryKey: ["structure", "workspaces"], queryFn: structureApi.workspaces, enabled: ambiguous.size > 0 });
  const label = (p: SessionProject) => {
    if (!ambiguous.has(p.name)) return `${p.name} (${p.role})`;
    const org = orgs.data?.find((o) => o.id === p.organization_id)?.name;
    const ws = wss.data?.workspaces.find((w) => w.id === p.workspace_id)?.name;
    // The workspace too when the organization alone does not tell them apart.
    const sameOrg = projects.some((q) => q.id !== p.id && q.name === p.name && q.organization_id === p.organization_id);
    const where = [org ?? "another organization", sameOrg ? ws : undefined].filter(Boolean).join(" / ");
    return `${where} / ${p.name} (${p.role})`;
  };
  if (projects.length === 0) return <span className="project-switcher">No project</span>;
  return (
    <label className="project-switcher">
      <span className="sr-only">Project</span>
      <select aria-label="Project" value={projectId} onChange={(e) => (e.target.value === NEW_PROJECT ? navigate("/settings/projects") : setProject(e.target.value))}>
        {!projects.some((p) => p.id === projectId) && (
          // The picked project was taken away (see AuthContext's 403 refresh).
          <option value={projectId} disabled>
            No access: {projectId}
          </option>
        )}
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {label(p)}
          </option>
        ))}
        <option value={NEW_PROJECT}>New project…</option>
      </select>
    </label>
  );
}
