import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, ApiError, buildUrl, onForbidden, onUnauthorized, parseErrorBody, setProjectId } from "./client";

interface Call {
  url: string;
  init: RequestInit;
}

function mockFetch(status: number, body: unknown): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
      return new Response(status === 204 ? null : text, { status, headers: { "Content-Type": "application/json" } });
    }),
  );
  return calls;
}

function clearCookies() {
  for (const c of document.cookie.split(";")) {
    const name = c.split("=")[0].trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
}

describe("api client", () => {
  beforeEach(() => {
    setProjectId("0190-project-a");
    clearCookies();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    onUnauthorized(null);
    onForbidden(null);
    setProjectId(null);
  });

  it("appends project_id to every /api and /services call, never elsewhere", () => {
    expect(buildUrl("/api/keys")).toBe("/api/keys?project_id=0190-project-a");
    expect(buildUrl("/services/completion/invoke", { a: 1 })).toBe("/services/completion/invoke?a=1&project_id=0190-project-a");
    expect(buildUrl("/api/x?y=2")).toBe("/api/x?y=2&project_id=0190-project-a");
    expect(buildUrl("/console/assets/a.js")).toBe("/console/assets/a.js");
    expect(buildUrl("/api/auth/session", undefined, true)).toBe("/api/auth/session");
    // An explicit project in the query wins.
    expect(buildUrl("/api/keys", { project_id: "other" })).toBe("/api/keys?project_id=other");
  });

  it("sends same-origin credentials and the CSRF cookie as X-CSRF-Token on unsafe methods only", async () => {
    document.cookie = "assay_csrf=tok%2Ben; path=/";
    document.cookie = "other=1; path=/";
    const calls = mockFetch(200, { count: 0 });
    await api.get("/api/keys");
    await api.post("/api/keys", { api_key: { name: "k" } });
    await api.put("/api/profile", { name: "n" });
    await api.patch("/api/simple/traces/1", {});
    await api.del("/api/keys/1");
    expect(calls).toHaveLength(5);
    for (const c of calls) expect(c.init.credentials).toBe("same-origin");
    const h = (i: number) => (calls[i].init.headers as Record<string, string>)["X-CSRF-Token"];
    expect(h(0)).toBeUndefined();
    expect([h(1), h(2), h(3), h(4)]).toEqual(["tok+en", "tok+en", "tok+en", "tok+en"]);
    expect(calls[1].init.method).toBe("POST");
    expect(calls[1].url).toBe("/api/keys?project_id=0190-project-a");
    expect(JSON.parse(calls[1].init.body as string)).toEqual({ api_key: { name: "k" } });
    expect((calls[1].init.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
  });

  it("hands a 401's server message to the unauthorized handler and throws it", async () => {
    mockFetch(401, { detail: { message: "Your session has expired. Sign in again.", code: "session_expired" } });
    const seen: string[] = [];
    onUnauthorized((m, code) => seen.push(`${code}:${m}`));
    const err = await api.get("/api/keys").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect((err as ApiError).code).toBe("session_expired");
    expect(seen).toEqual(["session_expired:Your session has expired. Sign in again."]);
  });

  it("does not redirect on 401 when the caller handles it (sign-in)", async () => {
    mockFetch(401, { detail: { message: "Invalid email or password." } });
    const seen: string[] = [];
    onUnauthorized((m) => seen.push(m));
    const err = await api.post("/api/auth/sign-in", { email: "a", password: "b" }, { no401Redirect: true, noProject: true }).catch((e: unknown) => e);
    expect((err as ApiError).message).toBe("Invalid email or password.");
    expect(seen).toEqual([]);
  });

  it("runs the forbidden handler on a project-scoped 403 only, and throws it", async () => {
    mockFetch(403, { detail: "You are not a member of project p." });
    let seen = 0;
    onForbidden(() => seen++);
    const err = await api.get("/api/keys").catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(403);
    expect((err as ApiError).message).toBe("You are not a member of project p.");
    expect(seen).toBe(1);
    await api.get("/api/auth/session", undefined, { noProject: true }).catch(() => undefined);
    expect(seen).toBe(1);
  });

  it("keeps the server's detail and the 422 field locations", async () => {
    mockFetch(422, {
      detail: [
        { loc: ["body", "annotation", "data", "score"], msg: "must be <= 1", type: "value_error.json_schema" },
        { loc: ["body", "annotation", "references"], msg: "field required" },
      ],
    });
    const err = (await api.post("/api/annotations", {}).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(422);
    expect(err.fields).toEqual([
      { loc: "body.annotation.data.score", msg: "must be <= 1" },
      { loc: "body.annotation.references", msg: "field required" },
    ]);
    expect(err.message).toContain("body.annotation.data.score: must be <= 1");
  });

  it("reads the other detail shapes: a string, an object with field, a 403 role refusal", () => {
    expect(parseErrorBody(404, { detail: "Not Found" }).message).toBe("Not Found");
    const f = parseErrorBody(422, { detail: { message: "an evaluator is required", field: "data.evaluators" } });
    expect(f.fields).toEqual([{ loc: "data.evaluators", msg: "an evaluator is required" }]);
    const d = parseErrorBody(403, {
      detail: { message: 'Your role (viewer) lacks the "write" permission.', permission: "write", role: "viewer" },
    });
    expect(d.message).toBe('Your role (viewer) lacks the "write" permission.');
    expect(parseErrorBody(502, "").message).toBe("Request failed (502).");
  });

  it("returns undefined for 204", async () => {
    mockFetch(204, undefined);
    await expect(api.del("/api/keys/1")).resolves.toBeUndefined();
  });
});
