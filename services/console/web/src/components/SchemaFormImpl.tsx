import { useState } from "react";
import Form from "@rjsf/core";
import type { RJSFSchema, RJSFValidationError } from "@rjsf/utils";
import type { ReactNode } from "react";
import { schemaValidator } from "./schemaValidator";

export interface SchemaFormProps {
  schema: Record<string, unknown>;
  formData?: unknown;
  onChange?: (data: unknown) => void;
  onSubmit: (data: unknown) => void;
  disabled?: boolean;
  submitLabel?: string;
  children?: ReactNode;
  id?: string;
}

/** The validator's refusals as a person reads them: "score: must be <= 5"
 * (the field path without rjsf's leading dot; the whole form has none). */
export function describeErrors(errors: RJSFValidationError[]): string[] {
  return errors.map((e) => {
    const field = (e.property ?? "").replace(/^\./, "");
    return field ? `${field}: ${e.message ?? e.stack}` : e.message ?? e.stack;
  });
}

/** A form generated from a JSON Schema (an evaluator's outputs schema), validated in the
 * browser with ajv (JSON Schema 2020-12, schemaValidator.ts) before the server checks it
 * again. A refused submit is never silent: each field shows its error and a summary
 * stands next to the button. The browser's own constraint checks are off so that the
 * schema's messages, not a native bubble, say what is wrong. */
export default function SchemaFormImpl({ schema, formData, onChange, onSubmit, disabled, submitLabel = "Submit", children, id }: SchemaFormProps) {
  const [refused, setRefused] = useState<string[]>([]);
  return (
    <Form
      id={id}
      schema={schema as RJSFSchema}
      formData={formData}
      validator={schemaValidator}
      disabled={disabled}
      showErrorList={false}
      noHtml5Validate
      onChange={(e) => onChange?.(e.formData)}
      onError={(errors) => setRefused(describeErrors(errors))}
      onSubmit={(e) => {
        setRefused([]);
        onSubmit(e.formData);
      }}
    >
      {refused.length > 0 && (
        <div className="error-box" role="alert" data-testid="form-errors">
          <strong>Not saved: </strong>
          <span className="error-message">the form has {refused.length === 1 ? "an error" : `${refused.length} errors`}</span>
          <ul className="error-fields">
            {refused.map((m, i) => (
              <li key={i}>{m}</li>
            ))}
          </ul>
        </div>
      )}
      {children ?? (
        <button type="submit" className="primary" disabled={disabled}>
          {submitLabel}
        </button>
      )}
    </Form>
  );
}
