import { lazy, Suspense } from "react";
import type { WidgetProps } from "@rjsf/utils";
import { codeSignature, codeVersion } from "../pages/evaluators/codeSignature";

// CodeMirror and its languages weigh ~150 KB gzipped: loaded only when a
// form has a code field.
const CodeEditor = lazy(() => import("./CodeEditor"));

/** The rjsf widget of a code parameter (a custom-code evaluator's "code"):
 * the signature evaluate must have for the chosen runtime and version above
 * a code editor. The form passes runtime and version as ui:options. */
export function CodeWidget({ id, value, onChange, disabled, readonly, options, label }: WidgetProps) {
  const sig = codeSignature(options.runtime, options.version);
  const language = options.runtime === "javascript" || options.runtime === "typescript" ? options.runtime : "python";
  return (
    <div className="code-widget" data-testid="code-widget" style={{ border: "1px solid var(--line)", borderRadius: 4, padding: 6, background: "#fff" }}>
      <div className="code-signature" data-testid="code-signature" style={{ margin: "4px 0 8px" }}>
        <div className="muted">Version {codeVersion(options.version)} calls:</div>
        <code style={{ display: "block", background: "#f3f4f7", padding: "4px 6px", borderRadius: 4 }}>{sig.signature}</code>
        <ul className="muted" style={{ margin: "4px 0", paddingLeft: 18, fontSize: 12 }}>
          {sig.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      </div>
      <Suspense fallback={<textarea id={id} rows={12} value={value ?? ""} readOnly style={{ width: "100%" }} />}>
        <CodeEditor
          id={id}
          label={label || "code"}
          value={typeof value === "string" ? value : ""}
          onChange={(v) => onChange(v)}
          language={language}
          readOnly={disabled || readonly}
        />
      </Suspense>
    </div>
  );
}
