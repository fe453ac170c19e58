import { ag, type Span } from "../api/tracing";

/**
 * The testset row a trace makes: its root span's inputs as columns (an input
 * that is not an object becomes one `input` column) and its output as
 * `correct_answer`, the column the catalog evaluators read as the reference
 * (a production answer is a draft of it, to be checked in the grid).
 */
export function traceRow(spans: Span[]): Record<string, unknown> | undefined {
  const root = spans.find((s) => !s.parent_id) ?? spans[0];
  if (!root) return undefined;
  const data = (ag(root).data ?? {}) as { inputs?: unknown; outputs?: unknown };
  const row: Record<string, unknown> = {};
  const inputs = data.inputs;
  if (inputs && typeof inputs === "object" && !Array.isArray(inputs)) {
    for (const [k, v] of Object.entries(inputs as Record<string, unknown>)) row[k] = cell(v);
  } else if (inputs !== undefined) {
    row.input = cell(inputs);
  }
  if (data.outputs !== undefined) row.correct_answer = cell(data.outputs);
  return row;
}

function cell(v: unknown): unknown {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" || v === null ? v : JSON.stringify(v);
}
