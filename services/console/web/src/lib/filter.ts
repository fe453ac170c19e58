// The filter builder's model and its translation into the tracing filter language
// (services/tracing/internal/query/filter.go):
// {operator, conditions:[{field, key?, operator, value?}]}.
// The builder edits rows; toFiltering is the only place that knows the wire shape.

export type Operator =
  | "is" | "is_not"
  | "eq" | "neq" | "gt" | "lt" | "gte" | "lte" | "btwn"
  | "startswith" | "endswith" | "contains" | "matches" | "like"
  | "in" | "not_in"
  | "has" | "has_not"
  | "exists" | "not_exists";

export interface Condition {
  field: string;
  key?: string;
  operator?: Operator;
  value?: unknown;
}

export interface Filtering {
  operator?: "and" | "or" | "not" | "nand" | "nor";
  conditions: (Condition | Filtering)[];
}

/** What a row filters on. */
export type RowKind = "field" | "attribute" | "reference" | "metric";

export interface FilterRow {
  id: string;
  kind: RowKind;
  /** field: the column name; attribute: the attribute key; reference: the reference key
   * (application, testset_revision, ...); metric: the metric path under ag.metrics. */
  target: string;
  operator: Operator;
  /** As typed; parsed by toFiltering (numbers, lists, ranges). */
  value: string;
  /** For references: whether the value is an id, a slug or a version. */
  refBy?: "id" | "slug" | "version";
}

const COMPARISON: Operator[] = ["is", "is_not"];
const NUMERIC: Operator[] = ["eq", "neq", "gt", "lt", "gte", "lte", "btwn"];
const STRING: Operator[] = ["startswith", "endswith", "contains", "matches", "like"];
const LIST: Operator[] = ["in", "not_in"];
const EXISTENCE: Operator[] = ["exists", "not_exists"];

export interface FieldInfo {
  name: string;
  label: string;
  operators: Operator[];
  /** Allowed values, for enum fields. */
  values?: string[];
}

/** Fields of the filter language with the operators each accepts (the tracing
 * service's fields table, services/tracing/internal/query/filter.go). */
export const FIELDS: FieldInfo[] = [
  { name: "span_name", label: "Name", operators: [...COMPARISON, ...STRING, ...LIST, ...EXISTENCE] },
  { name: "trace_type", label: "Trace type", operators: [...COMPARISON, ...LIST], values: ["invocation", "annotation", "unknown"] },
  {
    name: "span_type",
    label: "Span type",
    operators: [...COMPARISON, ...LIST],
    values: ["agent", "chain", "workflow", "task", "tool", "embedding", "query", "llm", "completion", "chat", "rerank", "unknown"],
  },
  { name: "status_code", label: "Status", operators: [...COMPARISON, ...LIST], values: ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"] },
  {
    name: "span_kind",
    label: "Span kind",
    operators: [...COMPARISON, ...LIST],
    values: ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"],
  },
  { name: "trace_id", label: "Trace id", operators: [...COMPARISON, ...LIST] },
  { name: "span_id", label: "Span id", operators: [...COMPARISON, ...LIST] },
  { name: "parent_id", label: "Parent id", operators: [...COMPARISON, ...LIST] },
  { name: "session_id", label: "Session id", operators: [...COMPARISON, ...STRING, ...LIST, ...EXISTENCE] },
  { name: "user_id", label: "User id", operators: [...COMPARISON, ...STRING, ...LIST, ...EXISTENCE] },
  { name: "status_message", label: "Status message", operators: [...COMPARISON, ...STRING, ...EXISTENCE] },
  { name: "content", label: "Content (full text)", operators: ["contains"] },
];

export const ATTRIBUTE_OPERATORS: Operator[] = [...COMPARISON, ...NUMERIC, ...STRING, ...LIST, ...EXISTENCE];
export const METRIC_OPERATORS: Operator[] = ["gt", "gte", "lt", "lte", "eq", "neq", "btwn", "exists", "not_exists"];
export const REFERENCE_OPERATORS: Operator[] = ["in", "not_in", "exists", "not_exists"];

/** Common metric paths under ag.metrics. */
export const METRICS: { path: string; label: string }[] = [
  { path: "duration.cumulative", label: "Duration (ms)" },
  { path: "costs.cumulative.total", label: "Cost (total)" },
  { path: "tokens.cumulative.total", label: "Tokens (total)" },
  { path: "tokens.cumulative.prompt", label: "Tokens (prompt)" },
  { path: "tokens.cumulative.completion", label: "Tokens (completion)" },
  { path: "errors.cumulative", label: "Errors" },
];

export const REFERENCE_KEYS = [
  "application",
  "application_variant",
  "application_revision",
  "evaluator",
  "evaluator_variant",
  "evaluator_revision",
  "testset",
  "testset_variant",
  "testset_revision",
  "testcase",
  "environment",
  "query",
];

export function operatorsFor(row: Pick<FilterRow, "kind" | "target">): Operator[] {
  switch (row.kind) {
    case "field":
      return FIELDS.find((f) => f.name === row.target)?.operators ?? COMPARISON;
    case "attribute":
      return ATTRIBUTE_OPERATORS;
    case "metric":
      return METRIC_OPERATORS;
    case "reference":
      return REFERENCE_OPERATORS;
  }
}

export function needsValue(op: Operator): boolean {
  return op !== "exists" && op !== "not_exists";
}

/** A typed scalar: numbers and booleans as such, null for "null", the rest as text. */
export function parseScalar(s: string): unknown {
  const t = s.trim();
  if (t === "true") return true;
  if (t === "false") return false;
  if (t === "null") return null;
  if (t !== "" && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return Number(t);
  return t;
}

function splitList(s: string): string[] {
  return s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
}

export class FilterError extends Error {
  constructor(
    readonly rowId: string,
    message: string,
  ) {
    super(message);
  }
}

function valueOf(row: FilterRow, numeric: boolean): unknown {
  const op = row.operator;
  if (!needsValue(op)) return undefined;
  const one = (s: string) => (numeric ? Number(s) : parseScalar(s));
  if (op === "in" || op === "not_in") return splitList(row.value).map(one);
  if (op === "btwn") {
    const parts = splitList(row.value);
    if (parts.length !== 2 || parts.some((p) => Number.isNaN(Number(p)))) {
      throw new FilterError(row.id, "between takes two numbers: low, high");
    }
    return parts.map(Number);
  }
  if (numeric || NUMERIC.includes(op)) {
    const n = Number(row.value.trim());
    if (row.value.trim() === "" || Number.isNaN(n)) throw new FilterError(row.id, `${op} takes a number`);
    return n;
  }
  // Names, ids and other text columns compare as strings.
  if (row.kind === "field" || STRING.includes(op)) return row.value.trim();
  return parseScalar(row.value);
}

/** One builder row as a condition of the filter language. Throws FilterError on bad input. */
export function rowToCondition(row: FilterRow): Condition {
  const op = row.operator;
  if (needsValue(op) && row.value.trim() === "") throw new FilterError(row.id, "a value is required");
  switch (row.kind) {
    case "field": {
      const c: Condition = { field: row.target, operator: op };
      if (needsValue(op)) c.value = valueOf(row, false);
      return c;
    }
    case "attribute": {
      if (!row.target.trim()) throw new FilterError(row.id, "an attribute key is required");
      const c: Condition = { field: "attributes", key: row.target.trim(), operator: op };
      if (needsValue(op)) c.value = valueOf(row, false);
      return c;
    }
    case "metric": {
      const c: Condition = { field: "attributes", key: "ag.metrics." + row.target, operator: op };
      if (needsValue(op)) c.value = valueOf(row, true);
      return c;
    }
    case "reference": {
      // References are probed by containment: one partial object per value, with the
      // reference's key in attributes.key (references are an array column:
      // services/tracing/internal/query/filter.go).
      if (!needsValue(op)) {
        return { field: "references", operator: op === "exists" ? "in" : "not_in", value: [{ attributes: { key: row.target } }] };
      }
      const by = row.refBy ?? "id";
      const values = splitList(row.value).map((v) => ({ [by]: by === "version" ? parseScalar(v) : v, attributes: { key: row.target } }));
      return { field: "references", operator: op, value: values };
    }
  }
}

/** The builder's rows as a Filtering, or undefined when there are none. */
export function toFiltering(rows: FilterRow[], combine: "and" | "or" = "and", extra: Condition[] = []): Filtering | undefined {
  const conditions: Condition[] = [...rows.map(rowToCondition)];
  if (conditions.length === 0 && extra.length === 0) return undefined;
  if (extra.length === 0) return { operator: combine, conditions };
  // Fixed conditions (roots only, a session) always hold, whatever the user's combinator.
  if (conditions.length === 0) return { operator: "and", conditions: extra };
  return { operator: "and", conditions: [...extra, { operator: combine, conditions }] };
}

let seq = 0;
export function newRow(kind: RowKind = "field"): FilterRow {
  seq += 1;
  const id = `r${Date.now().toString(36)}${seq}`;
  switch (kind) {
    case "field":
      return { id, kind, target: "span_name", operator: "contains", value: "" };
    case "attribute":
      return { id, kind, target: "ag.meta.request.model", operator: "is", value: "" };
    case "metric":
      return { id, kind, target: "duration.cumulative", operator: "gt", value: "" };
    case "reference":
      return { id, kind, target: "application", operator: "in", value: "", refBy: "slug" };
  }
}
