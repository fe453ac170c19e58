import { api } from "./client";
import type { Has, Schemas } from "./schema";

/** SimpleQueue is an annotation queue (SimpleQueue). */
export type SimpleQueue = Has<Schemas["SimpleQueue"], "id" | "run_id" | "data">;

/** RunStep is a queue run's step (EvalStep): type input, invocation or
 * annotation, origin custom, human or auto; its output schema read as an
 * object. */
export type RunStep = Has<Schemas["EvalStep"], "key" | "type" | "origin"> & { schemas?: { outputs?: Record<string, unknown> } };

/** Run is a queue's evaluation run (EvalRun). */
export type Run = Has<Omit<Schemas["EvalRun"], "data">, "id"> & { data: Omit<Schemas["EvalRunData"], "steps"> & { steps?: RunStep[] } };

/** Scenario is a queue's scenario (Scenario). */
export type Scenario = Has<Schemas["Scenario"], "id" | "run_id" | "status">;

/** Result is an annotation cell (Result). */
export type Result = Has<Schemas["Result"], "run_id" | "scenario_id" | "step_key" | "repeat_idx" | "status">;

export const queuesApi = {
  list: () => api.post<{ count: number; queues?: SimpleQueue[] }>("/api/simple/queues/query", {}),
  get: (id: string) => api.get<{ count: number; queue?: SimpleQueue }>(`/api/simple/queues/${encodeURIComponent(id)}`),
  scenarios: (id: string, userId?: string) =>
    api.post<{ count: number; scenarios?: Scenario[] }>(`/api/simple/queues/${encodeURIComponent(id)}/scenarios/query`, userId ? { user_id: userId } : {}),
  run: (id: string) => api.get<{ count: number; run?: Run }>(`/api/evaluations/runs/${encodeURIComponent(id)}`),
  results: (runId: string, scenarioIds: string[]) =>
    api.post<{ count: number; results?: Result[] }>("/api/evaluations/results/query", { result: { run_id: runId, scenario_ids: scenarioIds } }),
  saveResults: (results: Omit<Result, "id">[]) => api.post<{ count: number; results?: Result[] }>("/api/evaluations/results", { results }),
  create: (q: { name: string; description?: string; data: { kind: "traces" | "testcases"; evaluators: string[] } }) =>
    api.post<{ count: number; queue?: SimpleQueue }>("/api/simple/queues", { queue: q }),
  addTraces: (id: string, traceIds: string[]) =>
    api.post<{ count: number; scenarios?: Scenario[] }>(`/api/simple/queues/${encodeURIComponent(id)}/traces`, { trace_ids: traceIds }),
  testcase: (id: string) => api.get<{ count: number; testcase?: { id: string; data?: Record<string, unknown> } }>(`/api/testcases/${encodeURIComponent(id)}`),
};
