import Form from "@rjsf/core";
import validator from "@rjsf/validator-ajv8";
import type { RJSFSchema } from "@rjsf/utils";
import type { ReactNode } from "react";

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

/** A form generated from a JSON Schema (an evaluator's outputs schema), validated in the
 * browser with ajv before the server checks it again. */
export default function SchemaFormImpl({ schema, formData, onChange, onSubmit, disabled, submitLabel = "Submit", children, id }: SchemaFormProps) {
  return (
    <Form
      id={id}
      schema={schema as RJSFSchema}
      formData={formData}
      validator={validator}
      disabled={disabled}
      showErrorList={false}
      onChange={(e) => onChange?.(e.formData)}
      onSubmit={(e) => onSubmit(e.formData)}
    >
      {children ?? (
        <button type="submit" className="primary" disabled={disabled}>
          {submitLabel}
        </button>
      )}
    </Form>
  );
}
