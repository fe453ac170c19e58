import { useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { useMutation } from "@tanstack/react-query";
import { api } from "../../api/client";
import { ErrorBox } from "../../components/ErrorBox";

/**
 * Password reset: without a token, asks for a link by email (the gateway
 * answers the same whether or not the email has an account); with the
 * token of a mailed or operator-issued link, sets the new password once.
 */
export default function ResetPassword() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const ask = useMutation({
    mutationFn: () =>
      api.post<{ message: string; mail_configured: boolean }>("/api/auth/password-reset", { email }, { noProject: true, no401Redirect: true }),
  });
  const set = useMutation({
    mutationFn: () => api.post<void>("/api/auth/password-reset/confirm", { token, password }, { noProject: true, no401Redirect: true }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token) set.mutate();
    else ask.mutate();
  };
  return (
    <div className="signin">
      <form className="card" onSubmit={submit} aria-label="Reset the password">
        <h1>Set a new password</h1>
        {token ? (
          set.isSuccess ? (
            <p className="notice ok" role="status">
              Your password is set. <Link to="/signin">Sign in</Link>
            </p>
          ) : (
            <>
              <label>
                New password (8 to 72 bytes)
                <input type="password" required minLength={8} value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
              </label>
              <ErrorBox error={set.error} />
              <button type="submit" disabled={set.isPending}>
                Set password
              </button>
            </>
          )
        ) : ask.isSuccess ? (
          <p className="notice ok" role="status">
            {ask.data.message}
          </p>
        ) : (
          <>
            <label>
              Email
              <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="email" />
            </label>
            <ErrorBox error={ask.error} />
            <button type="submit" disabled={ask.isPending}>
              Mail me a link
            </button>
          </>
        )}
      </form>
    </div>
  );
}
