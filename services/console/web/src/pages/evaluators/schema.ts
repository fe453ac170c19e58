// Catalog parameter schemas made ready for @rjsf: the $schema URI goes (the
// validator is draft-07 based and the catalog's are 2020-12 schemas that
// use nothing later drafts added), and the defaults come from the
// template's or preset's parameters.

export type JSONSchema = Record<string, unknown>;

export function formSchema(schema: JSONSchema | undefined): JSONSchema {
  if (!schema) return { type: "object", properties: {}, additionalProperties: true };
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (k === "$schema") continue;
        out[k] = strip(x);
      }
      return out;
    }
    return v;
  };
  return strip(schema) as JSONSchema;
}

/** uiSchema renders long text fields (code, prompts) as text areas. */
export function uiSchema(schema: JSONSchema): Record<string, unknown> {
  const ui: Record<string, unknown> = {};
  const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
  for (const [k, p] of Object.entries(props)) {
    const t = p["x-ag-type"];
    if (k === "code" || t === "code" || t === "text_area" || k.endsWith("prompt") || k === "regex_pattern") ui[k] = { "ui:widget": "textarea" };
  }
  return ui;
}
