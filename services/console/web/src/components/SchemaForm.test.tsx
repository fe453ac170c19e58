import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import SchemaFormImpl from "./SchemaFormImpl";

// The outputs schema of a human evaluator as the registry hydrates it.
const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { score: { type: "number", minimum: 0, maximum: 5 }, comment: { type: "string" } },
  required: ["score"],
  additionalProperties: false,
};

describe("SchemaFormImpl", () => {
  afterEach(cleanup);

  it("submits a valid value of a 2020-12 schema", () => {
    const onSubmit = vi.fn();
    render(<SchemaFormImpl schema={schema} formData={{ score: 4 }} onSubmit={onSubmit} submitLabel="Save" />);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(onSubmit).toHaveBeenCalledWith({ score: 4 });
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("refuses an invalid value out loud, naming the field", () => {
    const onSubmit = vi.fn();
    render(<SchemaFormImpl schema={schema} formData={{ score: 9 }} onSubmit={onSubmit} submitLabel="Save" />);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getByRole("alert")).toHaveTextContent("score: must be <= 5");
  });
});
