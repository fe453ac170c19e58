// The one JSON Schema validator of every schema form (annotations, queue
// forms, evaluator parameters). The registry hydrates every evaluator
// schema with `$schema: https://json-schema.org/draft/2020-12/schema`, and
// @rjsf's stock validator is ajv's draft-07 class, which cannot resolve that
// meta-schema: it refused to compile the schema, so the form never
// submitted and said nothing. Ajv2020 knows 2020-12 (a schema without
// $schema is read as 2020-12 too), and the draft-07 meta-schema is added so
// a schema that declares draft-07 still compiles.
import { customizeValidator } from "@rjsf/validator-ajv8";
import type Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json";

export const schemaValidator = customizeValidator({
  // Ajv2020 extends the same core class @rjsf types its option with.
  AjvClass: Ajv2020 as unknown as typeof Ajv,
  additionalMetaSchemas: [draft07],
});
