import { api } from "./client";

export interface SimpleQueue {
  id: string;
  run_id: string;
  name?: string;
  description?: string;
  status?: string;
  flags?: Record<string, boolean>;
  data: {
    kind?: string;
    evaluators?: unknown;
    repeats?: number;
    assignments?: string[][];
    step_keys?: string[];
  };
  created_at?: string;
}

export interface Ref {
  id?: string;
  slug?: string;
  version?: string | number;
}

export interface RunStep {
  key: string;
  type: string; // input | invocation | annotation
  origin: string; // custom | human | auto
  references?: Record<string, Ref>;
  schemas?: { outputs?: Record<string, unknown> };
}

export interface Run {
  id: string;
  name?: string;
  status?: string;
  data: { steps?: RunStep[]; repeats?: number };
}

export interface Scenario {
  id: string;
  run_id: string;
  status: string;
  created_at?: string;
}

export interface Result {
  id?: string;
  run_id: string;
  scenario_id: string;
  step_key: string;
  repeat_idx: number;
  status: string;
  trace_id?: string;
  testcase_id?: string;
}

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
