import { api } from "./client";

// ---- API keys (gateway /api/keys)
export interface ApiKey {
  id: string;
  prefix: string;
  name?: string;
  project_id: string;
  role?: string;
  created_by_id?: string;
  created_at: string;
  expires_at?: string;
  key?: string; // the raw key, on create only
}

export const keysApi = {
  list: () => api.get<{ count: number; api_keys: ApiKey[] }>("/api/keys"),
  create: (k: { name?: string; expires_at?: string; role?: string }) =>
    api.post<{ count: number; api_key: ApiKey }>("/api/keys", { api_key: k }),
  revoke: (id: string) => api.del<void>(`/api/keys/${encodeURIComponent(id)}`),
};

// ---- provider secrets (registry /api/secrets): never returned with their values
export interface Secret {
  id: string;
  kind: "provider_key" | "custom_provider" | string;
  slug?: string;
  header?: { name?: string; description?: string };
  data?: { kind?: string; provider?: { url?: string; version?: string }; models?: { slug: string }[]; provider_slug?: string };
  created_at?: string;
  updated_at?: string;
}

export const secretsApi = {
  list: () => api.get<Secret[]>("/api/secrets"),
  create: (body: unknown) => api.post<Secret>("/api/secrets", body),
  // A body without secret.data.provider.key keeps the stored key.
  update: (id: string, body: unknown) => api.put<Secret>(`/api/secrets/${encodeURIComponent(id)}`, body),
  remove: (id: string) => api.del<void>(`/api/secrets/${encodeURIComponent(id)}`),
};

// ---- team routes (pkg/apidoc/gateway.teams.json)
export interface Member {
  id: string;
  user_id: string;
  email: string;
  username?: string;
  name?: string;
  role: string;
  created_at?: string;
}

export type TeamScope = "projects" | "workspaces" | "organizations";

// A workspace's team comes in the compatible platform's shape, a plain
// list of {user, roles} with invitations not yet accepted among them.
interface TeamMember {
  user: { id: string; email: string; username?: string; name?: string; status: string; created_at?: string };
  roles: { role_name: string }[];
}

async function listMembers(scope: TeamScope, id: string): Promise<{ count: number; members: Member[] }> {
  const path = `/api/${scope}/${encodeURIComponent(id)}/members`;
  if (scope !== "workspaces") return api.get<{ count: number; members: Member[] }>(path);
  const team = await api.get<TeamMember[]>(path);
  const members = team
    .filter((m) => m.user.status === "member")
    .map((m) => ({
      id: m.user.id,
      user_id: m.user.id,
      email: m.user.email,
      username: m.user.username,
      name: m.user.name,
      role: m.roles[0]?.role_name ?? "",
      created_at: m.user.created_at,
    }));
  return { count: members.length, members };
}

export const membersApi = {
  list: listMembers,
  setRole: (scope: TeamScope, id: string, userId: string, role: string) =>
    api.put<{ count: number; member: Member }>(`/api/${scope}/${encodeURIComponent(id)}/members/${encodeURIComponent(userId)}`, { role }),
  remove: (scope: TeamScope, id: string, userId: string) =>
    api.del<void>(`/api/${scope}/${encodeURIComponent(id)}/members/${encodeURIComponent(userId)}`),
};

export interface Invitation {
  id: string;
  email: string;
  role: string;
  workspace_id: string;
  organization_id?: string;
  project_ids?: string[];
  status: string;
  created_at?: string;
  expires_at: string;
}

export interface IssuedInvitation {
  invitation: Invitation;
  /** Absent when a mail relay is configured: the link goes to the email only. */
  token?: string;
  accept_url?: string;
  emailed: boolean;
}

export const invitationsApi = {
  list: (ws: string) => api.get<{ count: number; invitations: Invitation[] }>(`/api/workspaces/${encodeURIComponent(ws)}/invitations`),
  create: (ws: string, body: { email: string; role: string; project_ids?: string[] }) =>
    api.post<IssuedInvitation>(`/api/workspaces/${encodeURIComponent(ws)}/invitations`, body),
  resend: (ws: string, id: string) => api.post<IssuedInvitation>(`/api/workspaces/${encodeURIComponent(ws)}/invitations/${encodeURIComponent(id)}/resend`),
  revoke: (ws: string, id: string) => api.del<void>(`/api/workspaces/${encodeURIComponent(ws)}/invitations/${encodeURIComponent(id)}`),
  accept: (body: { token: string; password?: string; username?: string }) =>
    api.post<{ invitation: Invitation; user_id: string }>("/api/invitations/accept", body, { noProject: true, no401Redirect: true }),
};

export interface AuditEntry {
  id: string;
  at: string;
  organization_id?: string;
  project_id?: string;
  actor_user_id?: string;
  actor_key_id?: string;
  session_id?: string;
  action: string;
  target?: Record<string, string>;
  status?: number;
  request_id?: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  next?: string;
}

/** The audit log of the current project's organization: GET /api/audit {action?, actor?,
 * since?, until?, limit?, cursor?} → {count, entries, next?}. */
export async function auditList(q: Record<string, string | undefined>): Promise<AuditPage> {
  const body = await api.get<unknown>("/api/audit", q);
  if (Array.isArray(body)) return { entries: body as AuditEntry[] };
  const b = (body ?? {}) as Record<string, unknown>;
  const list = (b.entries ?? b.audit ?? b.audit_log ?? b.items ?? b.events ?? []) as AuditEntry[];
  const w = b.windowing as Record<string, unknown> | undefined;
  const next = (b.next ?? b.cursor ?? w?.next) as string | undefined;
  return { entries: list, next };
}

export const ROLES = ["owner", "admin", "editor", "annotator", "viewer"];
