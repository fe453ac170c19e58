// What the custom-code evaluator (auto_custom_code_run) calls, per version
// of its parameters, written in the runtime's language: the runtime binds
// version "1" as evaluate(app_params, inputs, output, correct_answer) and
// "2" and "3" (the default) as evaluate(inputs, outputs, trace)
// (services/runtime/internal/evaluators/customcode.go). A code that does not
// match the version fails with "missing 1 required positional argument".

export type CodeRuntime = "python" | "javascript" | "typescript";

export function codeRuntime(v: unknown): CodeRuntime {
  return v === "javascript" || v === "typescript" ? v : "python";
}

/** The version as the runtime reads it: "1", "2", or "3" when absent. */
export function codeVersion(v: unknown): "1" | "2" | "3" {
  const s = String(v ?? "").trim();
  return s === "1" || s === "2" ? s : "3";
}

export interface CodeSignature {
  /** The function's declaration line in the runtime's language. */
  signature: string;
  /** What each argument holds and what evaluate returns. */
  notes: string[];
}

const returns = "Return a number (the score; success when it reaches the threshold, 0.5 by default), a boolean (success) or an object (the outputs as they are).";

export function codeSignature(runtime: unknown, version: unknown): CodeSignature {
  const rt = codeRuntime(runtime);
  if (codeVersion(version) === "1") {
    const signature = {
      python: "def evaluate(app_params: dict, inputs: dict, output, correct_answer) -> float:",
      javascript: "function evaluate(app_params, inputs, output, correct_answer)",
      typescript: "function evaluate(app_params: Record<string, unknown>, inputs: Record<string, unknown>, output: unknown, correct_answer: unknown): number",
    }[rt];
    return {
      signature,
      notes: [
        "app_params: {} (the application's parameters are not passed)",
        "inputs: the testcase's columns; output: what the application answered",
        "correct_answer: inputs[correct_answer_key] (correct_answer by default), null when absent",
        returns,
      ],
    };
  }
  const signature = {
    python: "def evaluate(inputs: dict, outputs, trace: dict | None) -> float:",
    javascript: "function evaluate(inputs, outputs, trace)",
    typescript: "function evaluate(inputs: Record<string, unknown>, outputs: unknown, trace: Record<string, unknown> | null): number",
  }[rt];
  return {
    signature,
    notes: [
      "inputs: the testcase's columns, the expected answer among them (inputs[\"correct_answer\"])",
      "outputs: what the application answered; trace: the application's trace, or null",
      returns,
    ],
  };
}

/** The catalog's default code per runtime: the template's own and each
 * preset's (python_default, javascript_default, typescript_default). */
export function runtimeDefaults(entries: ({ runtime?: unknown; code?: unknown } | undefined)[]): Partial<Record<CodeRuntime, string>> {
  const out: Partial<Record<CodeRuntime, string>> = {};
  for (const p of entries) {
    if (p && typeof p.code === "string" && !out[codeRuntime(p.runtime)]) out[codeRuntime(p.runtime)] = p.code;
  }
  return out;
}

/** The parameters after a form change: when the runtime changed and the code
 * is still the catalog's default for the old one, the code becomes the new
 * runtime's default (a Python default run as JavaScript fails on its first
 * line). Code the user wrote is never replaced. */
export function switchRuntimeDefault(
  prev: Record<string, unknown>,
  next: Record<string, unknown>,
  defaults: Partial<Record<CodeRuntime, string>>,
): Record<string, unknown> {
  if (!("code" in next) || prev.runtime === next.runtime) return next;
  const was = defaults[codeRuntime(prev.runtime)];
  const now = defaults[codeRuntime(next.runtime)];
  if (now === undefined || was === undefined || next.code !== was) return next;
  return { ...next, code: now };
}
