import { useNavigate } from "react-router";
import { useAuth } from "../auth/AuthContext";

// The last entry of the switcher leads to where projects are made.
const NEW_PROJECT = "__new_project__";

/** Picks the project every request is scoped to, among the session's projects. */
export function ProjectSwitcher() {
  const { session, projectId, setProject } = useAuth();
  const navigate = useNavigate();
  const projects = session?.projects ?? [];
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
            {p.name} ({p.role})
          </option>
        ))}
        <option value={NEW_PROJECT}>New project…</option>
      </select>
    </label>
  );
}
