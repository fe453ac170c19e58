// Typed calls of the application (prompt) pages and the playground
// (/api/applications, /api/environments and /services/completion; see
// docs/reference/registry.md and docs/reference/runtime.md).
import { json, raw } from "./call";
import { readStream, type StreamEvent, type StreamFormat } from "./stream";
import type { Body, Has, Schemas } from "./schema";

export interface Message {
  role: string;
  content: string;
}

export interface LLMConfig {
  model?: string;
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
  [k: string]: unknown;
}

export interface PromptTemplate {
  messages: Message[];
  template_format?: "curly" | "mustache" | "fstring" | "jinja2";
  input_keys?: string[] | null;
  llm_config?: LLMConfig;
  [k: string]: unknown;
}

/** RevisionData is an application revision's data (RevisionData), its
 * parameters read as a prompt (the document types them as any object). */
export type RevisionData = Omit<Schemas["RevisionData"], "parameters"> & {
  parameters?: { prompt?: PromptTemplate; [k: string]: unknown };
  [k: string]: unknown;
};

/** Application is an application's header (Artifact). */
export type Application = Has<Schemas["Artifact"], "id" | "slug">;

/** AppVariant is an application's variant (ApplicationVariant). */
export type AppVariant = Has<Schemas["ApplicationVariant"], "id" | "slug" | "application_id">;

/** AppRevision is an application revision (ApplicationRevision), its data
 * read as RevisionData. */
export type AppRevision = Has<Omit<Schemas["ApplicationRevision"], "data">, "id" | "slug" | "version" | "application_id" | "application_variant_id"> & {
  data?: RevisionData;
};

/** Environment is a simple environment (SimpleEnvironment): what is
 * deployed in it, by key. */
export type Environment = Has<Schemas["SimpleEnvironment"], "id" | "slug">;

export async function listApps(): Promise<Application[]> {
  const r = await json<{ applications?: Application[] }>("POST", "/api/applications/query", {});
  return r.applications ?? [];
}

export async function getApp(id: string): Promise<Application | undefined> {
  return (await json<{ application?: Application }>("GET", `/api/applications/${id}`)).application;
}

/** createApp makes an application with its first variant and a revision
 * carrying the prompt (simple create: v0 and v1). Its slug is made from
 * the name by the registry, free in the project. */
export async function createApp(name: string, template: "completion" | "chat", prompt: PromptTemplate) {
  const body: Body<"postSimpleApplications"> = { application: { name, data: { uri: `agenta:builtin:${template}:v0`, parameters: { prompt } } } };
  return json<{ application?: { id: string; slug: string; variant_id: string; revision_id: string } }>("POST", "/api/simple/applications/", body);
}

export async function listAppVariants(appId: string): Promise<AppVariant[]> {
  const r = await json<{ application_variants?: AppVariant[] }>("POST", "/api/applications/variants/query", {
    application_refs: [{ id: appId }],
  });
  return r.application_variants ?? [];
}

/** forkVariant makes a new variant from a revision (its lineage copied). */
export async function forkVariant(slug: string, from: AppRevision, name = slug) {
  const body: Body<"postApplicationsVariantsFork"> = {
    application_variant: { slug, name },
    application_variant_ref: { id: from.application_variant_id },
    application_revision_ref: { id: from.id },
  };
  return json<{ application_variant?: AppVariant }>("POST", "/api/applications/variants/fork", body);
}

/** variantHistory lists a variant's revisions newest first. */
export async function variantHistory(variantId: string, depth = 50): Promise<AppRevision[]> {
  const r = await json<{ application_revisions?: AppRevision[] }>("POST", "/api/applications/revisions/log", {
    application_revisions: { application_variant_id: variantId, depth },
  });
  return r.application_revisions ?? [];
}

export async function getAppRevision(id: string): Promise<AppRevision | undefined> {
  return (await json<{ application_revision?: AppRevision }>("GET", `/api/applications/revisions/${id}`)).application_revision;
}

/** appRevisions lists every revision of an application (all variants). */
export async function appRevisions(appId: string): Promise<AppRevision[]> {
  const r = await json<{ application_revisions?: AppRevision[] }>("POST", "/api/applications/revisions/query", {
    application_refs: [{ id: appId }],
  });
  return r.application_revisions ?? [];
}

export async function commitAppRevision(base: AppRevision, data: RevisionData, message: string): Promise<AppRevision> {
  const body: Body<"postApplicationsRevisionsCommit"> = {
    application_revision: {
      application_id: base.application_id,
      application_variant_id: base.application_variant_id,
      message,
      data,
    },
  };
  const r = await json<{ application_revision: AppRevision }>("POST", "/api/applications/revisions/commit", body);
  return r.application_revision;
}

export async function listEnvironments(): Promise<Environment[]> {
  const r = await json<{ environments?: Environment[] }>("POST", "/api/simple/environments/query", {});
  return r.environments ?? [];
}

export async function deploy(revisionId: string, environmentSlug: string, message?: string) {
  const body: Body<"postApplicationsRevisionsDeploy"> = {
    application_revision_ref: { id: revisionId },
    environment_ref: { slug: environmentSlug },
    message,
  };
  return json<{ application_revision?: AppRevision }>("POST", "/api/applications/revisions/deploy", body);
}

export interface InvokeRequest {
  revisionId?: string;
  parameters?: RevisionData["parameters"];
  inputs: Record<string, unknown>;
}

export interface InvokeResult {
  text: string;
  outputs?: unknown;
  traceId?: string;
  error?: string;
  status?: number;
}

/** invokeStream runs an application revision through the runtime with the
 * edited parameters, streamed; onDelta gets each piece of text. A refusal
 * before the first token is an ordinary JSON error. */
export async function invokeStream(
  req: InvokeRequest,
  format: StreamFormat,
  onDelta: (text: string) => void,
  signal?: AbortSignal,
): Promise<InvokeResult> {
  const body: Record<string, unknown> = { data: { inputs: req.inputs, parameters: req.parameters } };
  if (req.revisionId) body.references = { application_revision: { id: req.revisionId } };
  const res = await raw(
    "/services/invoke",
    {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: format === "sse" ? "text/event-stream" : "application/x-ndjson" },
      body: JSON.stringify(body),
      signal,
    },
    { allowError: true },
  );
  const ctype = res.headers.get("Content-Type") ?? "";
  if (!res.ok || ctype.startsWith("application/json")) {
    const env = await res.json().catch(() => ({}));
    const msg = env?.status?.message ?? env?.detail?.message ?? (typeof env?.detail === "string" ? env.detail : undefined);
    if (!res.ok) return { text: "", error: msg ?? `HTTP ${res.status}`, status: res.status, traceId: env?.trace_id };
    const out = env?.data?.outputs;
    const text = typeof out === "string" ? out : JSON.stringify(out);
    onDelta(text);
    return { text, outputs: out, traceId: env?.trace_id, status: res.status };
  }
  let text = "";
  const result: InvokeResult = { text: "" };
  await readStream(res, format, (e: StreamEvent) => {
    if (e.type === "delta") {
      const d = e.data?.delta ?? "";
      text += d;
      onDelta(d);
    } else if (e.type === "done") {
      result.outputs = e.data?.outputs;
      result.traceId = e.trace_id;
      result.status = e.status?.code;
    } else if (e.type === "error") {
      result.error = e.status?.message ?? "the stream failed";
      result.traceId = e.trace_id;
      result.status = e.status?.code;
    }
  });
  result.text = text;
  return result;
}

/** templateVariables lists the {{variables}} of a prompt's messages (curly
 * and mustache; {var} for fstring), in first-seen order. */
export function templateVariables(p: PromptTemplate): string[] {
  const seen = new Set<string>();
  const re = p.template_format === "fstring" ? /\{([A-Za-z_][\w.]*)\}/g : /\{\{\s*([^{}#/^!>\s][^{}]*?)\s*\}\}/g;
  for (const m of p.messages ?? []) {
    for (const x of String(m.content ?? "").matchAll(re)) {
      const v = x[1].trim();
      if (!v.startsWith("$") && !v.startsWith("/")) seen.add(v.startsWith("inputs.") ? v.slice(7) : v);
    }
  }
  return [...seen];
}
