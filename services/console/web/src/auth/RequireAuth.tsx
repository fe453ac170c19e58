import type { ReactNode } from "react";
import { useAuth } from "./AuthContext";
import { Loading } from "../components/Loading";
import { ErrorBox } from "../components/ErrorBox";

/** Renders its children once a session exists; the auth context redirects when there is none. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const { session, probeError } = useAuth();
  if (probeError) return <ErrorBox error={probeError} title="The console cannot reach the platform" />;
  if (!session) return <Loading label="Checking your session…" />;
  return <>{children}</>;
}
