import { describe, expect, it } from "vitest";
import { codeSignature, codeVersion, runtimeDefaults, switchRuntimeDefault } from "./codeSignature";

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

describe("switchRuntimeDefault", () => {
  const defaults = runtimeDefaults([
    { runtime: "python", code: "def evaluate(inputs, outputs, trace): ..." },
    { runtime: "javascript", code: "function evaluate(inputs, outputs, trace) {}" },
    undefined,
  ]);

  it("swaps a default code for the new runtime's default", () => {
    const next = switchRuntimeDefault({ runtime: "python", code: defaults.python }, { runtime: "javascript", code: defaults.python }, defaults);
    expect(next).toEqual({ runtime: "javascript", code: defaults.javascript });
  });

  it("keeps code the user wrote, and code when the runtime stays", () => {
    const mine = { runtime: "javascript", code: "def evaluate(i, o, t): return 1" };
    expect(switchRuntimeDefault({ runtime: "python", code: mine.code }, mine, defaults)).toBe(mine);
    const same = { runtime: "python", code: defaults.javascript };
    expect(switchRuntimeDefault({ runtime: "python", code: defaults.python }, same, defaults)).toBe(same);
  });

  it("keeps the code when the new runtime has no default", () => {
    const next = { runtime: "typescript", code: defaults.python };
    expect(switchRuntimeDefault({ runtime: "python", code: defaults.python }, next, defaults)).toBe(next);
  });
});
