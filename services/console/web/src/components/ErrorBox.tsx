import { ApiError } from "../api/client";

/** Shows an error as the server said it: its message, its status and, for 422s, each field. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  const message = e ? e.message : error instanceof Error ? error.message : String(error);
  return (
    <div className="error-box" role="alert">
      {title && <strong>{title}: </strong>}
      <span className="error-message">{message}</span>
      {e && e.status > 0 && <span className="error-status"> (HTTP {e.status})</span>}
      {e && e.fields.length > 0 && (
        <ul className="error-fields">
          {e.fields.map((f, i) => (
            <li key={i}>
              {f.loc && <code>{f.loc}</code>} {f.msg}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Field errors of a 422 whose location ends with the given field path (for inline messages). */
export function fieldErrors(error: unknown, field: string): string[] {
  if (!(error instanceof ApiError)) return [];
  return error.fields.filter((f) => f.loc === field || f.loc.endsWith("." + field)).map((f) => f.msg);
}
