// The few shapes of call the testset, application, evaluator and
// evaluation pages make, all through the skeleton's client (apiFetch:
// project scoping, CSRF, 401 handling).
import { apiFetch, ApiError, buildUrl, parseErrorBody, readCookie } from "./client";

export { ApiError };

export interface CallOptions {
  /** return the body of a non-2xx answer instead of throwing (the
   * runtime's envelopes carry their status in the body). */
  allowError?: boolean;
}

/** json calls a JSON route and returns its decoded body. */
export async function json<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
  if (!opts.allowError) return apiFetch<T>(path, { method, body });
  const res = await raw(
    path,
    {
      method,
      headers: body instanceof FormData ? {} : { "Content-Type": "application/json", Accept: "application/json" },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    },
    opts,
  );
  const text = await res.text();
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    return { status: { code: res.status, message: text } } as T;
  }
}

/** raw makes a request with the session rules and returns the Response
 * (for streams and files); a non-2xx answer throws ApiError unless
 * allowError. */
export async function raw(path: string, init: RequestInit = {}, opts: CallOptions = {}): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  const headers = new Headers(init.headers);
  if (method !== "GET" && method !== "HEAD") {
    const csrf = readCookie("assay_csrf");
    if (csrf) headers.set("X-CSRF-Token", csrf);
  }
  const res = await fetch(buildUrl(path), { ...init, method, headers, credentials: "same-origin" });
  if (!res.ok && !opts.allowError) {
    const text = await res.text();
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      /* the text itself */
    }
    const p = parseErrorBody(res.status, data);
    throw new ApiError(res.status, p.message, p.detail, p.fields, p.code);
  }
  return res;
}

/** url is a path with the project scope, for links (downloads). */
export function url(path: string): string {
  return buildUrl(path);
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
