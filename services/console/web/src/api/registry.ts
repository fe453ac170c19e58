import { api } from "./client";

export interface SimpleEvaluator {
  id: string;
  slug: string;
  name?: string;
  description?: string;
  revision_id?: string;
  variant_id?: string;
  data?: { uri?: string; schemas?: { outputs?: Record<string, unknown>; parameters?: Record<string, unknown> }; [k: string]: unknown };
}

export function listEvaluators() {
  return api.post<{ count: number; evaluators?: SimpleEvaluator[] }>("/api/simple/evaluators/query", {});
}

export function getEvaluator(id: string) {
  return api.get<{ count: number; evaluator?: SimpleEvaluator }>(`/api/simple/evaluators/${encodeURIComponent(id)}`);
}

export interface EvaluatorRevision {
  id: string;
  slug?: string;
  version?: string | number;
  evaluator_id?: string;
  workflow_id?: string;
  artifact_id?: string;
  name?: string;
  data?: { schemas?: { outputs?: Record<string, unknown> }; [k: string]: unknown };
}

/** An evaluator revision by id (queue steps pin revisions). */
export function getEvaluatorRevision(id: string) {
  return api.get<{ count: number; evaluator_revision?: EvaluatorRevision }>(`/api/evaluators/revisions/${encodeURIComponent(id)}`);
}
