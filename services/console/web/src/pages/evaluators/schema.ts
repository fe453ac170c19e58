// Catalog parameter schemas made ready for @rjsf: the $schema URI goes (the
// form's validator, components/schemaValidator.ts, reads a schema without
// one as 2020-12, the catalog's draft), and the defaults come from the
// template's or preset's parameters.
import { CodeWidget } from "../../components/CodeWidget";

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

/** uiSchema renders long text fields (prompts) as text areas, and code as a
 * code editor under the signature the values' runtime and version call. */
export function uiSchema(schema: JSONSchema, values: Record<string, unknown> = {}): Record<string, unknown> {
  const ui: Record<string, unknown> = {};
  const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
  for (const [k, p] of Object.entries(props)) {
    const t = p["x-ag-type"];
    if (k === "code" || t === "code" || t === "text_area" || k.endsWith("prompt") || k === "regex_pattern") ui[k] = { "ui:widget": "textarea" };
    if (k === "code" || t === "code") ui[k] = { "ui:widget": CodeWidget, "ui:options": { runtime: values.runtime, version: values.version } };
  }
  return ui;
}
