import CodeMirror from "@uiw/react-codemirror";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";

export interface CodeEditorProps {
  value: string;
  onChange?: (v: string) => void;
  language: "python" | "javascript" | "typescript";
  readOnly?: boolean;
  id?: string;
  label?: string;
}

const languages = {
  python: () => python(),
  javascript: () => javascript(),
  typescript: () => javascript({ typescript: true }),
};

/** A code editor (CodeMirror 6) with the language's highlighting, line
 * numbers, bracket matching and Python-style indentation on Tab. */
export default function CodeEditor({ value, onChange, language, readOnly, id, label }: CodeEditorProps) {
  return (
    <CodeMirror
      id={id}
      aria-label={label}
      value={value}
      onChange={(v) => onChange?.(v)}
      extensions={[languages[language]()]}
      editable={!readOnly}
      readOnly={readOnly}
      minHeight="240px"
      maxHeight="520px"
      basicSetup={{ foldGutter: false, autocompletion: false }}
      className="code-editor"
    />
  );
}
