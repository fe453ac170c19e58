import { describe, expect, it } from "vitest";
import { variablesOf } from "./judge";

describe("variablesOf", () => {
  it("lists each variable once and marks one used only inside its own section optional", () => {
    const msgs = [
      { role: "system", content: "Grade {{outputs}}." },
      { role: "user", content: "Inputs: {{inputs}}\n{{#correct_answer}}Expected answer: {{correct_answer}}\n{{/correct_answer}}Output: {{outputs}}" },
    ];
    expect(variablesOf(msgs, "mustache")).toEqual([
      { name: "outputs", optional: false },
      { name: "inputs", optional: false },
      { name: "correct_answer", optional: true },
    ]);
  });

  it("a reference answer used outside its section is required", () => {
    const msgs = [{ role: "user", content: "{{#correct_answer}}x{{/correct_answer}} Expected: {{correct_answer}}" }];
    expect(variablesOf(msgs, "mustache")).toEqual([{ name: "correct_answer", optional: false }]);
    expect(variablesOf([{ role: "user", content: "Expected: {{correct_answer}}" }], "curly")).toEqual([{ name: "correct_answer", optional: false }]);
  });

  it("reads columns behind inputs. and $.inputs., and f-strings", () => {
    expect(variablesOf([{ role: "user", content: "{{inputs.country}} {{$.inputs.city}} {{ trace }}" }], "curly").map((v) => v.name)).toEqual(["country", "city", "trace"]);
    expect(variablesOf([{ role: "user", content: "{country} and {outputs}" }], "fstring").map((v) => v.name)).toEqual(["country", "outputs"]);
    expect(variablesOf([{ role: "user", content: [{ type: "text", text: "{{country}}" }] }], "curly").map((v) => v.name)).toEqual(["country"]);
  });
});
