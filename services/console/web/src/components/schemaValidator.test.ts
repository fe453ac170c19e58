import { describe, expect, it } from "vitest";
import type { RJSFSchema } from "@rjsf/utils";
import { schemaValidator } from "./schemaValidator";

const outputs = (draft: string): RJSFSchema => ({
  $schema: draft,
  type: "object",
  properties: { score: { type: "number", minimum: 0, maximum: 5 }, comment: { type: "string" } },
  required: ["score"],
  additionalProperties: false,
});

describe("schemaValidator", () => {
  it("validates a schema that declares JSON Schema 2020-12", () => {
    const s = outputs("https://json-schema.org/draft/2020-12/schema");
    const ok = schemaValidator.validateFormData({ score: 4, comment: "fine" }, s);
    expect(ok.errors).toEqual([]);
    const bad = schemaValidator.validateFormData({ score: 9 }, s);
    expect(bad.errors.map((e) => `${e.property} ${e.message}`)).toEqual([".score must be <= 5"]);
  });

  it("reads 2020-12 keywords (prefixItems)", () => {
    const s: RJSFSchema = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }] } as RJSFSchema;
    expect(schemaValidator.validateFormData([1], s).errors).toHaveLength(1);
    expect(schemaValidator.validateFormData(["a"], s).errors).toEqual([]);
  });

  it("still compiles a draft-07 schema and one without $schema", () => {
    expect(schemaValidator.validateFormData({ score: 9 }, outputs("http://json-schema.org/draft-07/schema#")).errors).toHaveLength(1);
    const { $schema: _, ...plain } = outputs("");
    expect(schemaValidator.validateFormData({ score: 1 }, plain).errors).toEqual([]);
  });
});
