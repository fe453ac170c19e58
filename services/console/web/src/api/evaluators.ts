// Typed calls of the evaluator pages (/api/evaluators and
// /api/simple/evaluators; evaluator parameters in docs/reference/registry.md):
// the catalog, simple evaluators, a try-out through the runtime.
import { json } from "./call";
import type { Body, Has, Schemas } from "./schema";

/** CatalogTemplate is a catalog evaluator (Template), its data read as a
 * workflow's (the document types a template's data as any value). */
export type CatalogTemplate = Has<Omit<Schemas["Template"], "data" | "presets">, "key"> & {
  data: { uri: string; schemas?: { parameters?: Record<string, unknown>; outputs?: Record<string, unknown> }; parameters?: Record<string, unknown> };
};

/** CatalogPreset is a template's preset (Template), its data read as a
 * workflow's. */
export type CatalogPreset = Has<Omit<Schemas["Template"], "data" | "presets">, "key"> & {
  data: { uri: string; parameters?: Record<string, unknown>; schemas?: Record<string, unknown> };
};

/** Evaluator is a simple evaluator (SimpleWorkflow). */
export type Evaluator = Has<Schemas["SimpleWorkflow"], "id" | "slug">;

export async function templates(): Promise<CatalogTemplate[]> {
  return (await json<{ templates?: CatalogTemplate[] }>("GET", "/api/evaluators/catalog/templates/")).templates ?? [];
}

export async function template(key: string): Promise<CatalogTemplate | undefined> {
  return (await json<{ template?: CatalogTemplate }>("GET", `/api/evaluators/catalog/templates/${encodeURIComponent(key)}`)).template;
}

export async function presets(key: string): Promise<CatalogPreset[]> {
  return (await json<{ presets?: CatalogPreset[] }>("GET", `/api/evaluators/catalog/templates/${encodeURIComponent(key)}/presets/`)).presets ?? [];
}

export async function listEvaluators(): Promise<Evaluator[]> {
  return (await json<{ evaluators?: Evaluator[] }>("POST", "/api/simple/evaluators/query", {})).evaluators ?? [];
}

export async function getEvaluator(id: string): Promise<Evaluator | undefined> {
  return (await json<{ evaluator?: Evaluator }>("GET", `/api/simple/evaluators/${id}`)).evaluator;
}

/** createEvaluator makes an evaluator named name; the registry makes its
 * slug from the name, free in the project. */
export async function createEvaluator(name: string, uri: string, parameters: Record<string, unknown>): Promise<Evaluator> {
  const body: Body<"postSimpleEvaluators"> = { evaluator: { name, data: { uri, parameters } } };
  const r = await json<{ evaluator?: Evaluator }>("POST", "/api/simple/evaluators/", body);
  if (!r.evaluator) throw new Error("the registry made no evaluator");
  return r.evaluator;
}

/** editEvaluator commits the evaluator's parameters as a new revision
 * (PUT /api/simple/evaluators/{id}), keeping its name, description, flags,
 * tags and meta as they are. */
export async function editEvaluator(ev: Evaluator, parameters: Record<string, unknown>): Promise<Evaluator> {
  const { id, name, description, flags, tags, meta } = ev;
  const body: Body<"putSimpleEvaluatorsById"> = { evaluator: { id, name, description, flags, tags, meta, data: { ...ev.data, parameters } } };
  const r = await json<{ evaluator?: Evaluator }>("PUT", `/api/simple/evaluators/${id}`, body);
  if (!r.evaluator) throw new Error("the registry did not commit the evaluator");
  return r.evaluator;
}

/** uriKey is the catalog key of a URI (`agenta:builtin:auto_exact_match:v0`
 * → auto_exact_match). */
export function uriKey(uri: string | undefined): string | undefined {
  const p = (uri ?? "").split(":");
  return p.length >= 3 ? p[2] : undefined;
}

export interface TryResult {
  status: number;
  outputs?: unknown;
  error?: string;
  traceId?: string;
}

/** tryEvaluator runs an evaluator on one sample: its URI and parameters
 * (saved or being edited), the sample's inputs and the application's
 * output. */
export async function tryEvaluator(uri: string, parameters: Record<string, unknown>, inputs: Record<string, unknown>, outputs: unknown): Promise<TryResult> {
  const key = uriKey(uri);
  const r = await json<{ status?: { code?: number; message?: string }; data?: { outputs?: unknown }; trace_id?: string }>(
    "POST",
    `/services/${key}/v0/invoke`,
    { data: { parameters, inputs, outputs } },
    { allowError: true },
  );
  const code = r.status?.code ?? 200;
  return { status: code, outputs: r.data?.outputs, error: code >= 400 ? r.status?.message : undefined, traceId: r.trace_id };
}

/** headRevisionId is the id of the evaluator's latest revision (what a
 * run pins). */
export async function headRevisionId(evaluatorId: string): Promise<string | undefined> {
  const body: Body<"postEvaluatorsRevisionsRetrieve"> = { evaluator_ref: { id: evaluatorId } };
  const r = await json<{ evaluator_revision?: { id: string } }>("POST", "/api/evaluators/revisions/retrieve", body);
  return r.evaluator_revision?.id;
}
