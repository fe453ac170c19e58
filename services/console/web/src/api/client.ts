// The console's one door to the platform. Every call goes through apiFetch, which applies
// the session rules of the gateway (docs/console.md, signing in;
// pkg/apidoc/gateway.sessions.json):
//   - credentials "same-origin", so the assay_session cookie goes along;
//   - project_id=<current project> appended to every /api and /services request;
//   - X-CSRF-Token (the assay_csrf cookie) on POST, PUT, PATCH and DELETE;
//   - a 401 hands the server's message to the unauthorized handler (the auth context
//     sends the user to the sign-in page with it); a 403 of a project-scoped call runs
//     the forbidden handler (the auth context refreshes the session's projects).
// Errors become ApiError, carrying the server's JSON detail and, for 422s, the field
// locations so forms can show them next to the field.

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface FieldError {
  /** Location of the field, e.g. ["body", "annotation", "data", "score"] or "data.evaluators". */
  loc: string;
  msg: string;
}

export class ApiError extends Error {
  readonly status: number;
  /** The server's `detail` as sent (a string, an object or a list), or the raw text. */
  readonly detail: unknown;
  readonly fields: FieldError[];
  readonly code?: string;

  constructor(status: number, message: string, detail: unknown, fields: FieldError[] = [], code?: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
    this.fields = fields;
    this.code = code;
  }
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

let currentProject: string | null = null;
let unauthorized: ((message: string, code?: string) => void) | null = null;
let forbidden: (() => void) | null = null;

/** Sets the project every request is scoped to (null: the server's default project). */
export function setProjectId(id: string | null): void {
  currentProject = id;
}

export function getProjectId(): string | null {
  return currentProject;
}

/** Registers what happens on a 401 (the auth context redirects to sign-in). */
export function onUnauthorized(fn: ((message: string, code?: string) => void) | null): void {
  unauthorized = fn;
}

/**
 * Registers what happens on a 403 of a project-scoped request: the user's
 * projects or role may have changed, so the auth context asks for the session again.
 */
export function onForbidden(fn: (() => void) | null): void {
  forbidden = fn;
}

/** Reads one cookie by name from document.cookie. */
export function readCookie(name: string): string | null {
  if (typeof document === "undefined") return null;
  for (const part of document.cookie.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      return decodeURIComponent(part.slice(eq + 1).trim());
    }
  }
  return null;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
  /** Leave project_id off (sign-in, the session itself). */
  noProject?: boolean;
  /** Do not run the 401 handler (the session probe handles its own 401). */
  no401Redirect?: boolean;
  headers?: Record<string, string>;
}

/** Builds the URL of a call: path plus query plus project_id for /api and /services. */
export function buildUrl(path: string, query?: Query, noProject?: boolean): string {
  const params = new URLSearchParams();
  if (query) {
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null) params.set(k, String(v));
    }
  }
  const scoped = path.startsWith("/api/") || path.startsWith("/services/");
  if (scoped && !noProject && currentProject && !params.has("project_id")) {
    params.set("project_id", currentProject);
  }
  const qs = params.toString();
  if (!qs) return path;
  return path + (path.includes("?") ? "&" : "?") + qs;
}

/** Turns an error body into a message and field errors, whatever shape the detail has. */
export function parseErrorBody(status: number, body: unknown): { message: string; fields: FieldError[]; code?: string; detail: unknown } {
  const fallback = `Request failed (${status}).`;
  if (body === null || body === undefined || body === "") return { message: fallback, fields: [], detail: body };
  if (typeof body === "string") return { message: body, fields: [], detail: body };
  const detail = typeof body === "object" && body !== null && "detail" in body ? (body as { detail: unknown }).detail : body;
  const fields: FieldError[] = [];
  let message = fallback;
  let code: string | undefined;
  const locOf = (loc: unknown): string =>
    Array.isArray(loc) ? loc.map(String).join(".") : typeof loc === "string" ? loc : "";
  if (typeof detail === "string") {
    message = detail;
  } else if (Array.isArray(detail)) {
    // FastAPI-style validation list: [{loc, msg, type}]
    for (const item of detail) {
      if (item && typeof item === "object") {
        const it = item as { loc?: unknown; msg?: unknown; message?: unknown };
        fields.push({ loc: locOf(it.loc), msg: String(it.msg ?? it.message ?? "invalid") });
      } else {
        fields.push({ loc: "", msg: String(item) });
      }
    }
    message = fields.length ? fields.map((f) => (f.loc ? `${f.loc}: ${f.msg}` : f.msg)).join("; ") : fallback;
  } else if (detail && typeof detail === "object") {
    const d = detail as Record<string, unknown>;
    if (typeof d.message === "string") message = d.message;
    if (typeof d.code === "string") code = d.code;
    const field = d.field ?? d.loc ?? d.path;
    if (field !== undefined) fields.push({ loc: locOf(field), msg: message });
    if (Array.isArray(d.errors)) {
      for (const e of d.errors) {
        if (e && typeof e === "object") {
          const ee = e as Record<string, unknown>;
          fields.push({ loc: locOf(ee.loc ?? ee.field ?? ee.path), msg: String(ee.msg ?? ee.message ?? "invalid") });
        }
      }
    }
    if (typeof d.message !== "string" && !fields.length) message = JSON.stringify(d);
  }
  return { message, fields, code, detail };
}

/** Calls the platform and returns the decoded JSON (undefined for 204). Throws ApiError. */
export async function apiFetch<T = unknown>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = (opts.method ?? (opts.body !== undefined ? "POST" : "GET")).toUpperCase();
  const headers: Record<string, string> = { Accept: "application/json", ...(opts.headers ?? {}) };
  let body: BodyInit | undefined;
  if (opts.body !== undefined) {
    if (opts.body instanceof FormData || typeof opts.body === "string") {
      body = opts.body as BodyInit;
    } else {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.body);
    }
  }
  if (UNSAFE.has(method)) {
    const csrf = readCookie("assay_csrf");
    if (csrf) headers["X-CSRF-Token"] = csrf;
  }
  let res: Response;
  try {
    res = await fetch(buildUrl(path, opts.query, opts.noProject), {
      method,
      headers,
      body,
      credentials: "same-origin",
      signal: opts.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, `The platform cannot be reached: ${(e as Error).message}`, null);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = text;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const parsed = parseErrorBody(res.status, data);
    const err = new ApiError(res.status, parsed.message, parsed.detail, parsed.fields, parsed.code);
    if (res.status === 401 && !opts.no401Redirect && unauthorized) unauthorized(parsed.message, parsed.code);
    if (res.status === 403 && !opts.noProject && forbidden) forbidden();
    throw err;
  }
  return (text ? data : undefined) as T;
}

export const api = {
  get: <T>(path: string, query?: Query, opts: RequestOptions = {}) => apiFetch<T>(path, { ...opts, method: "GET", query }),
  post: <T>(path: string, body?: unknown, opts: RequestOptions = {}) =>
    apiFetch<T>(path, { ...opts, method: "POST", body: body ?? {} }),
  put: <T>(path: string, body?: unknown, opts: RequestOptions = {}) =>
    apiFetch<T>(path, { ...opts, method: "PUT", body: body ?? {} }),
  patch: <T>(path: string, body?: unknown, opts: RequestOptions = {}) =>
    apiFetch<T>(path, { ...opts, method: "PATCH", body: body ?? {} }),
  del: <T>(path: string, opts: RequestOptions = {}) => apiFetch<T>(path, { ...opts, method: "DELETE" }),
};
