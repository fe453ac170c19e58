import { useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { useMutation } from "@tanstack/react-query";
import { invitationsApi } from "../../api/settings";
import { ErrorBox } from "../../components/ErrorBox";

/** Redeems an invitation token (the accept_url the gateway hands out). */
export default function Accept() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const [password, setPassword] = useState("");
  const [username, setUsername] = useState("");
  const m = useMutation({
    mutationFn: () => invitationsApi.accept({ token, password: password || undefined, username: username || undefined }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    m.mutate();
  };
  return (
    <div className="signin">
      <form className="card" onSubmit={submit} aria-label="Accept the invitation">
        <h1>Join Assay</h1>
        {!token && <p className="error-box">This link has no invitation token.</p>}
        {m.isSuccess ? (
          <p className="notice ok" role="status">
            Invitation for {m.data.invitation.email} accepted. <Link to="/signin">Sign in</Link>
          </p>
        ) : (
          <>
            <p className="muted">New here? Choose a password. Already a user? Give your password (or sign in first).</p>
            <label>
              Username (optional)
              <input value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="username" />
            </label>
            <label>
              Password
              <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
            </label>
            <ErrorBox error={m.error} />
            <button type="submit" disabled={!token || m.isPending}>
              Accept invitation
            </button>
          </>
        )}
      </form>
    </div>
  );
}
