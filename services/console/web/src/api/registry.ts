import { api } from "./client";
import type { Has, Schemas } from "./schema";

/** SimpleEvaluator is a simple evaluator (SimpleWorkflow). */
export type SimpleEvaluator = Has<Schemas["SimpleWorkflow"], "id" | "slug">;

export function listEvaluators() {
  return api.post<{ count: number; evaluators?: SimpleEvaluator[] }>("/api/simple/evaluators/query", {});
}

export function getEvaluator(id: string) {
  return api.get<{ count: number; evaluator?: SimpleEvaluator }>(`/api/simple/evaluators/${encodeURIComponent(id)}`);
}

/** EvaluatorRevision is an evaluator revision (EvaluatorRevision), its
 * data read as a workflow's (WorkflowData). */
export type EvaluatorRevision = Has<Omit<Schemas["EvaluatorRevision"], "data">, "id"> & { data?: Schemas["WorkflowData"] };

/** An evaluator revision by id (queue steps pin revisions). */
export function getEvaluatorRevision(id: string) {
  return api.get<{ count: number; evaluator_revision?: EvaluatorRevision }>(`/api/evaluators/revisions/${encodeURIComponent(id)}`);
}
