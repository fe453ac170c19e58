import { useEffect, useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { useAuth } from "../../auth/AuthContext";
import { ErrorBox } from "../../components/ErrorBox";

export default function SignIn() {
  const { signIn, session } = useAuth();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The message the redirect carried (an expired session, a revoked one, ...).
  const reason = params.get("message");
  const next = params.get("next") || "/";

  useEffect(() => {
    if (session) navigate(next.startsWith("/") ? next : "/", { replace: true });
  }, [session, next, navigate]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email, password);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="signin">
      <form onSubmit={submit} className="card" aria-label="Sign in">
        <h1>Sign in to Assay</h1>
        {reason && !error && (
          <p className="notice" role="status">
            {reason}
          </p>
        )}
        <label>
          Email
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p className="muted">
          <Link to="/reset-password">Forgot your password?</Link>
        </p>
      </form>
    </div>
  );
}
