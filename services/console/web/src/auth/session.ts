import { api } from "../api/client";
import type { Session } from "../api/types";

// The session routes carry no project: the session itself says which projects exist.
export function fetchSession(): Promise<Session> {
  return api.get<Session>("/api/auth/session", undefined, { noProject: true, no401Redirect: true });
}

export function signIn(email: string, password: string): Promise<Session> {
  return api.post<Session>("/api/auth/sign-in", { email, password }, { noProject: true, no401Redirect: true });
}

export function signOut(): Promise<void> {
  return api.post<void>("/api/auth/sign-out", undefined, { noProject: true, no401Redirect: true });
}

const PROJECT_KEY = "assay.project_id";

/**
 * The project the page's ?project_id= names (the links the compatible SDK prints reach the
 * console with it, through the gateway's redirect), if it is one of the user's; else the one
 * the user picked last, if it still is; else the session's default.
 */
export function pickProject(s: Session): string {
  let linked: string | null = null;
  try {
    linked = new URLSearchParams(window.location.search).get("project_id");
  } catch {
    linked = null;
  }
  if (linked && s.projects.some((p) => p.id === linked)) {
    rememberProject(linked);
    return linked;
  }
  let stored: string | null = null;
  try {
    stored = localStorage.getItem(PROJECT_KEY);
  } catch {
    stored = null;
  }
  if (stored && s.projects.some((p) => p.id === stored)) return stored;
  return s.project_id || s.projects[0]?.id || "";
}

export function rememberProject(id: string): void {
  try {
    localStorage.setItem(PROJECT_KEY, id);
  } catch {
    /* private mode: the choice lasts for this page only */
  }
}
