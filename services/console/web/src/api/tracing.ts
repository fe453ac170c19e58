import { api } from "./client";
import type { Filtering } from "../lib/filter";

// The canonical span as the tracing service returns it (pkg/spanmodel.Span): null and
// empty fields are omitted.
export interface Span {
  trace_id: string;
  span_id: string;
  parent_id?: string;
  trace_type?: string;
  span_type?: string;
  span_kind?: string;
  span_name: string;
  start_time: string;
  end_time: string;
  status_code?: string;
  status_message?: string;
  session_id?: string;
  user_id?: string;
  attributes?: Record<string, unknown>;
  references?: Reference[];
  links?: { trace_id: string; span_id: string; attributes?: { key?: string } }[];
  events?: { name: string; timestamp?: string; attributes?: Record<string, unknown> }[];
  created_at?: string;
}

export interface Reference {
  id?: string;
  slug?: string;
  version?: string | number;
  attributes?: { key?: string };
}

export interface Windowing {
  oldest?: string;
  newest?: string;
  limit?: number;
  order?: "ascending" | "descending";
  next?: string;
  interval?: number;
}

export function querySpans(filtering: Filtering | undefined, windowing: Windowing, signal?: AbortSignal) {
  return api.post<{ count: number; spans?: Span[] }>("/api/spans/query", { filtering, windowing }, { signal });
}

/** Every span of the given traces, flat. */
export function traceSpans(traceIds: string[], signal?: AbortSignal) {
  return api.get<{ count: number; spans?: Span[] }>("/api/spans", { trace_ids: traceIds.join(",") }, { signal });
}

/** Session ids seen in the window; realtime orders them by last activity instead of first;
 * filtering keeps the sessions of the spans that match it. */
export function querySessions(windowing: Windowing, realtime = false, filtering?: Filtering) {
  return api.post<{ count: number; session_ids?: string[]; windowing?: Windowing }>("/api/tracing/sessions/query", { realtime, windowing, filtering });
}

export interface Annotation {
  trace_id: string;
  span_id: string;
  origin?: string;
  kind?: string;
  channel?: string;
  data?: { outputs?: unknown; [k: string]: unknown };
  references?: Record<string, Reference>;
  links?: Record<string, { trace_id: string; span_id: string }>;
  created_at?: string;
  meta?: Record<string, unknown>;
}

/** Annotations linked to a trace (any of its spans). */
export function traceAnnotations(traceId: string) {
  return api.post<{ count: number; annotations?: Annotation[] }>("/api/annotations/query", {
    annotation: { links: [{ trace_id: traceId }] },
  });
}

export function createAnnotation(body: {
  evaluator: Reference;
  outputs: unknown;
  link: { trace_id: string; span_id: string };
  meta?: Record<string, unknown>;
}) {
  return api.post<{ count: number; annotation: Annotation }>("/api/annotations", {
    annotation: {
      origin: "human",
      kind: "adhoc",
      channel: "web",
      data: { outputs: body.outputs },
      references: { evaluator: body.evaluator },
      links: { invocation: body.link },
      meta: body.meta,
    },
  });
}

// ---- analytics (POST /api/tracing/analytics/query)

export interface MetricSpec {
  type: string;
  path: string;
  bins?: number;
}

export interface AnalyticsBucket {
  timestamp: string;
  interval: number;
  metrics: Record<string, MetricStats>;
}

export interface MetricStats {
  type?: string;
  count?: number;
  sum?: number;
  mean?: number;
  min?: number;
  max?: number;
  pcts?: Record<string, number>;
  freq?: { value: unknown; count: number; density?: number }[];
}

export function queryAnalytics(body: {
  oldest?: string;
  newest?: string;
  interval?: number;
  filter?: Filtering;
  specs: MetricSpec[];
  focus?: "trace" | "span";
}) {
  return api.post<{ count: number; buckets?: AnalyticsBucket[] }>("/api/tracing/analytics/query", body);
}

// ---- helpers to read a span's attributes

export function ag(span: Span): Record<string, unknown> {
  const a = span.attributes?.ag;
  return a && typeof a === "object" ? (a as Record<string, unknown>) : {};
}

/** Reads a dotted path out of a nested object. */
export function pick(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

export interface SpanFigures {
  durationMs?: number;
  tokens?: number;
  cost?: number;
  model?: string;
  errors?: number;
  /** The model of a model call no price source knows (ag.meta.pricing.unpriced): its cost is unknown, not zero. */
  unpricedModel?: string;
  /** What priced the call: "override" or "genai-prices@<version>" (ag.meta.pricing.source). */
  pricedBy?: string;
}

export function figures(span: Span): SpanFigures {
  const a = ag(span);
  const m = a.metrics;
  const dur = num(pick(m, "duration.cumulative")) ?? Date.parse(span.end_time) - Date.parse(span.start_time);
  return {
    durationMs: Number.isFinite(dur) ? dur : undefined,
    tokens: num(pick(m, "tokens.cumulative.total")) ?? num(pick(m, "tokens.incremental.total")),
    cost: num(pick(m, "costs.cumulative.total")) ?? num(pick(m, "costs.incremental.total")),
    errors: num(pick(m, "errors.cumulative")) ?? num(pick(m, "errors.incremental")),
    model: (pick(a, "meta.response.model") ?? pick(a, "meta.request.model")) as string | undefined,
    unpricedModel: pick(a, "meta.pricing.unpriced") === true ? String(pick(a, "meta.pricing.model") ?? "?") : undefined,
    pricedBy: typeof pick(a, "meta.pricing.source") === "string" ? (pick(a, "meta.pricing.source") as string) : undefined,
  };
}

/** The models of a trace's model calls that no price source knows, each once, in span order: the trace's cost leaves them out. */
export function unpricedModels(spans: Span[]): string[] {
  const out = new Set<string>();
  for (const s of spans) {
    const m = figures(s).unpricedModel;
    if (m !== undefined) out.add(m);
  }
  return [...out];
}

export function fmtDuration(ms: number | undefined): string {
  if (ms === undefined) return "—";
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

export function fmtCost(c: number | undefined): string {
  if (c === undefined) return "—";
  return c < 0.01 ? `$${c.toPrecision(2)}` : `$${c.toFixed(3)}`;
}
