import { describe, expect, it } from "vitest";
import { codeSignature, codeVersion } from "./codeSignature";

describe("codeSignature", () => {
  it("follows the version the runtime binds", () => {
    expect(codeSignature("python", "3").signature).toBe("def evaluate(inputs: dict, outputs, trace: dict | None) -> float:");
    expect(codeSignature("python", "2").signature).toBe(codeSignature("python", "3").signature);
    expect(codeSignature("python", "1").signature).toBe("def evaluate(app_params: dict, inputs: dict, output, correct_answer) -> float:");
    expect(codeSignature("javascript", undefined).signature).toBe("function evaluate(inputs, outputs, trace)");
    expect(codeSignature("typescript", 1).signature).toContain("app_params: Record<string, unknown>");
  });

  it("reads an absent or unknown version as 3, as the runtime does", () => {
    expect(codeVersion(undefined)).toBe("3");
    expect(codeVersion(" 2 ")).toBe("2");
    expect(codeVersion(1)).toBe("1");
  });
});
