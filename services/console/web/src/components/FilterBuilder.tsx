import {
  FIELDS,
  METRICS,
  REFERENCE_KEYS,
  needsValue,
  newRow,
  operatorsFor,
  type FilterRow,
  type Operator,
  type RowKind,
} from "../lib/filter";

export interface FilterBuilderProps {
  rows: FilterRow[];
  combine: "and" | "or";
  onChange: (rows: FilterRow[], combine: "and" | "or") => void;
  /** Row id → message, for rows the translation refused. */
  errors?: Record<string, string>;
}

const KIND_LABEL: Record<RowKind, string> = { field: "Field", attribute: "Attribute", reference: "Reference", metric: "Metric" };

/** Edits a list of filter rows; lib/filter turns them into the filter language. */
export function FilterBuilder({ rows, combine, onChange, errors = {} }: FilterBuilderProps) {
  const set = (id: string, patch: Partial<FilterRow>) =>
    onChange(
      rows.map((r) => {
        if (r.id !== id) return r;
        const next = { ...r, ...patch };
        const ops = operatorsFor(next);
        if (!ops.includes(next.operator)) next.operator = ops[0];
        return next;
      }),
      combine,
    );
  const changeKind = (id: string, kind: RowKind) => onChange(rows.map((r) => (r.id === id ? { ...newRow(kind), id } : r)), combine);
  return (
    <div className="filter-builder" aria-label="Filters">
      {rows.length > 1 && (
        <label className="inline">
          Match
          <select aria-label="Combine" value={combine} onChange={(e) => onChange(rows, e.target.value as "and" | "or")}>
            <option value="and">all conditions</option>
            <option value="or">any condition</option>
          </select>
        </label>
      )}
      {rows.map((r) => {
        const field = r.kind === "field" ? FIELDS.find((f) => f.name === r.target) : undefined;
        return (
          <div className="filter-row" key={r.id} data-row={r.id}>
            <select aria-label="Filter on" value={r.kind} onChange={(e) => changeKind(r.id, e.target.value as RowKind)}>
              {(Object.keys(KIND_LABEL) as RowKind[]).map((k) => (
                <option key={k} value={k}>
                  {KIND_LABEL[k]}
                </option>
              ))}
            </select>
            {r.kind === "field" && (
              <select aria-label="Field" value={r.target} onChange={(e) => set(r.id, { target: e.target.value, value: "" })}>
                {FIELDS.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.label}
                  </option>
                ))}
              </select>
            )}
            {r.kind === "attribute" && (
              <input
                aria-label="Attribute key"
                placeholder="ag.meta.request.model"
                value={r.target}
                onChange={(e) => set(r.id, { target: e.target.value })}
                list="attr-keys"
              />
            )}
            {r.kind === "metric" && (
              <select aria-label="Metric" value={r.target} onChange={(e) => set(r.id, { target: e.target.value })}>
                {METRICS.map((m) => (
                  <option key={m.path} value={m.path}>
                    {m.label}
                  </option>
                ))}
              </select>
            )}
            {r.kind === "reference" && (
              <>
                <select aria-label="Reference" value={r.target} onChange={(e) => set(r.id, { target: e.target.value })}>
                  {REFERENCE_KEYS.map((k) => (
                    <option key={k} value={k}>
                      {k}
                    </option>
                  ))}
                </select>
                <select aria-label="Reference by" value={r.refBy ?? "id"} onChange={(e) => set(r.id, { refBy: e.target.value as FilterRow["refBy"] })}>
                  <option value="id">id</option>
                  <option value="slug">slug</option>
                  <option value="version">version</option>
                </select>
              </>
            )}
            <select aria-label="Operator" value={r.operator} onChange={(e) => set(r.id, { operator: e.target.value as Operator })}>
              {operatorsFor(r).map((o) => (
                <option key={o} value={o}>
                  {o.replace("_", " ")}
                </option>
              ))}
            </select>
            {needsValue(r.operator) &&
              (field?.values && (r.operator === "is" || r.operator === "is_not") ? (
                <select aria-label="Value" value={r.value} onChange={(e) => set(r.id, { value: e.target.value })}>
                  <option value="">—</option>
                  {field.values.map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  aria-label="Value"
                  placeholder={r.operator === "in" || r.operator === "not_in" ? "a, b, c" : r.operator === "btwn" ? "low, high" : "value"}
                  value={r.value}
                  onChange={(e) => set(r.id, { value: e.target.value })}
                />
              ))}
            <button type="button" className="link" aria-label="Remove filter" onClick={() => onChange(rows.filter((x) => x.id !== r.id), combine)}>
              ✕
            </button>
            {errors[r.id] && <span className="field-error">{errors[r.id]}</span>}
          </div>
        );
      })}
      <button type="button" onClick={() => onChange([...rows, newRow("field")], combine)}>
        + Filter
      </button>
      <datalist id="attr-keys">
        {["ag.meta.request.model", "ag.meta.response.model", "ag.meta.system", "ag.tags.", "ag.data.inputs.", "ag.data.outputs.", "ag.flags.is_web"].map(
          (k) => (
            <option key={k} value={k} />
          ),
        )}
      </datalist>
    </div>
  );
}
