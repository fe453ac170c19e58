import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useLocation, useNavigate } from "react-router";
import { useQueryClient } from "@tanstack/react-query";
import { ApiError, onForbidden, onUnauthorized, setProjectId } from "../api/client";
import type { Session, SessionProject } from "../api/types";
import { fetchSession, pickProject, rememberProject, signIn as apiSignIn, signOut as apiSignOut } from "./session";

export interface AuthState {
  /** undefined while the first session probe runs; null when signed out. */
  session: Session | null | undefined;
  projectId: string;
  project: SessionProject | undefined;
  setProject: (id: string) => void;
  /** Reads the session again (after a project was created, say), keeping the picked project. */
  refreshSession: () => Promise<void>;
  signIn: (email: string, password: string) => Promise<void>;
  signOut: () => Promise<void>;
  /** Error of the session probe other than a 401 (the platform is down, ...). */
  probeError: ApiError | null;
}

const AuthContext = createContext<AuthState | null>(null);

export function useAuth(): AuthState {
  const v = useContext(AuthContext);
  if (!v) throw new Error("useAuth outside AuthProvider");
  return v;
}

/** Pages that work without a session (no redirect to sign-in from them). */
export function isPublicPath(path: string): boolean {
  return path.startsWith("/signin") || path.startsWith("/invitations/accept") || path.startsWith("/reset-password");
}

export function signInPath(message?: string, next?: string): string {
  const p = new URLSearchParams();
  if (message) p.set("message", message);
  if (next && next !== "/" && !next.startsWith("/signin")) p.set("next", next);
  const qs = p.toString();
  return "/signin" + (qs ? "?" + qs : "");
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [projectId, setProjectIdState] = useState("");
  const [probeError, setProbeError] = useState<ApiError | null>(null);
  const navigate = useNavigate();
  const location = useLocation();
  const qc = useQueryClient();

  const adopt = useCallback((s: Session) => {
    const id = pickProject(s);
    setProjectId(id);
    setProjectIdState(id);
    setSession(s);
  }, []);

  useEffect(() => {
    let live = true;
    fetchSession()
      .then((s) => live && adopt(s))
      .catch((e: unknown) => {
        if (!live) return;
        setSession(null);
        if (e instanceof ApiError && e.status === 401) {
          // "signed_out" (no cookie) needs no message; an expired session says so.
          const msg = e.code === "signed_out" ? undefined : e.message;
          if (!isPublicPath(location.pathname)) {
            navigate(signInPath(msg, location.pathname + location.search), { replace: true });
          }
        } else {
          setProbeError(e instanceof ApiError ? e : new ApiError(0, String(e), null));
        }
      });
    return () => {
      live = false;
    };
    // The probe runs once per page load; later 401s come through onUnauthorized.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    onUnauthorized((message) => {
      setSession(null);
      qc.clear();
      const here = window.location.pathname.replace(/^\/console/, "") + window.location.search;
      navigate(signInPath(message, here), { replace: true });
    });
    return () => onUnauthorized(null);
  }, [navigate, qc]);

  // A 403 may mean the user lost the project or their role changed: the session
  // is asked again (once at a time), and the switcher shows what is left. The
  // current project stays picked, so the page keeps the server's message.
  const refreshing = useRef(false);
  useEffect(() => {
    onForbidden(() => {
      if (refreshing.current) return;
      refreshing.current = true;
      fetchSession()
        .then(setSession)
        .catch(() => {
          /* a 401 here reaches the sign-in page through the next call */
        })
        .finally(() => {
          refreshing.current = false;
        });
    });
    return () => onForbidden(null);
  }, []);

  const setProject = useCallback(
    (id: string) => {
      rememberProject(id);
      setProjectId(id);
      setProjectIdState(id);
      // Every cached answer belongs to the old project.
      qc.clear();
    },
    [qc],
  );

  const refreshSession = useCallback(async () => {
    setSession(await fetchSession());
  }, []);

  const signIn = useCallback(
    async (email: string, password: string) => {
      const s = await apiSignIn(email, password);
      qc.clear();
      adopt(s);
    },
    [adopt, qc],
  );

  const signOut = useCallback(async () => {
    try {
      await apiSignOut();
    } finally {
      setSession(null);
      qc.clear();
      navigate("/signin", { replace: true });
    }
  }, [navigate, qc]);

  const value = useMemo<AuthState>(
    () => ({
      session,
      projectId,
      project: session?.projects.find((p) => p.id === projectId),
      setProject,
      refreshSession,
      signIn,
      signOut,
      probeError,
    }),
    [session, projectId, setProject, refreshSession, signIn, signOut, probeError],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
