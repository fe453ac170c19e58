// What the signed-in user may do in the current project, read once from the
// platform's permission table (GET /api/access/roles: each role with its
// permissions) and the user's role in the project (the session). Pages gate
// their write controls by permission, never by role name, so a change of the
// table on the server changes the console with it. The server still refuses
// what a role cannot do; gating only spares the user a control that fails.
import type { ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { useAuth } from "./AuthContext";

export type Permission =
  | "read"
  | "write"
  | "deploy"
  | "run_evaluation"
  | "run_service"
  | "annotate"
  | "manage_keys"
  | "manage_members"
  | "own";

interface AccessRole {
  role: string;
  description?: string;
  permissions: string[];
}

export function fetchAccessRoles() {
  return api.get<{ project?: AccessRole[]; workspace?: AccessRole[]; organization?: AccessRole[] }>("/api/access/roles", undefined, { noProject: true });
}

export interface Permissions {
  /** False until the table is read: gate nothing before (the server decides). */
  ready: boolean;
  role: string;
  can: (p: Permission) => boolean;
  /** Why p is missing, for a tooltip or a note: "Viewers cannot create API keys." */
  why: (p: Permission, action: string) => string;
}

function plural(role: string): string {
  if (!role) return "Your role";
  return role.charAt(0).toUpperCase() + role.slice(1) + "s";
}

export function usePermissions(): Permissions {
  const { project } = useAuth();
  const q = useQuery({ queryKey: ["access-roles"], queryFn: fetchAccessRoles, staleTime: Infinity });
  const role = project?.role ?? "";
  const held = new Set(q.data?.project?.find((r) => r.role === role)?.permissions ?? []);
  const ready = q.isSuccess && !!project;
  return {
    ready,
    role,
    // Before the table is read every control stays enabled: the server refuses
    // what the role cannot do, and a fast user is not blocked by a slow read.
    can: (p) => !ready || held.has(p),
    why: (p, action) => `${plural(role)} cannot ${action}: it needs the ${p} permission.`,
  };
}

/** An inline note saying what the user's role cannot do on this page (nothing when it can). */
export function Denied({ perm, action }: { perm: Permission; action: string }): ReactNode {
  const p = usePermissions();
  if (p.can(perm)) return null;
  return (
    <p className="notice denied" role="note" data-testid="denied">
      {p.why(perm, action)}
    </p>
  );
}

/**
 * Whether a role held on a workspace or an organization (the role the team
 * lists answer with) grants p there, from the same table; true until the
 * table is read, as usePermissions.
 */
export function useLevelPermissions(): (level: "workspace" | "organization", role: string | undefined, p: Permission) => boolean {
  const q = useQuery({ queryKey: ["access-roles"], queryFn: fetchAccessRoles, staleTime: Infinity });
  return (level, role, p) => {
    if (!q.isSuccess) return true;
    return !!q.data[level]?.find((r) => r.role === role)?.permissions.includes(p);
  };
}
