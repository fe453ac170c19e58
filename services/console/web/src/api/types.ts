// Shapes of the session routes (pkg/apidoc/gateway.sessions.json).

export interface SessionUser {
  id: string;
  email: string;
  username?: string;
  name?: string;
}

export interface SessionProject {
  id: string;
  name: string;
  workspace_id: string;
  organization_id: string;
  role: string;
  is_default?: boolean;
}

export interface Session {
  user: SessionUser;
  projects: SessionProject[];
  project_id: string;
  csrf_token: string;
}
