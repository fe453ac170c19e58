import { api } from "./client";

// Organizations, workspaces and projects (the gateway's team routes,
// pkg/apidoc/gateway.teams.json). They are the user's, not one project's:
// no project_id goes with them.
export interface OrganizationItem {
  id: string;
  name: string;
  role?: string;
  workspaces: string[];
}

export interface WorkspaceItem {
  id: string;
  name: string;
  organization_id: string;
  role?: string;
}

export interface ProjectItem {
  id: string;
  name: string;
  workspace_id: string;
  organization_id: string;
  role?: string;
  is_default?: boolean;
}

const np = { noProject: true } as const;

export const structureApi = {
  organizations: () => api.get<OrganizationItem[]>("/api/organizations", undefined, np),
  workspaces: () => api.get<{ count: number; workspaces: WorkspaceItem[] }>("/api/workspaces", undefined, np),
  projects: () => api.get<{ count: number; projects: ProjectItem[] }>("/api/projects", undefined, np),
  createOrganization: (name: string) => api.post<OrganizationItem>("/api/organizations", { name }, np),
  createWorkspace: (organization_id: string, name: string) =>
    api.post<{ count: number; workspace: WorkspaceItem }>("/api/workspaces", { organization_id, name }, np),
  createProject: (workspace_id: string, name: string) =>
    api.post<{ count: number; project: ProjectItem }>("/api/projects", { workspace_id, name }, np),
};
