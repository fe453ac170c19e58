// The LLM judge's fields in the evaluator form (rjsf custom fields and a
// widget, beside the generic form): its prompt as a list of role + content
// messages with the variables highlighted, and beside it which variables
// the prompt needs and where each comes from; the model picked from the
// configured providers; response type and template format as selects.
import type { FieldProps, WidgetProps } from "@rjsf/utils";
import { Fragment, useLayoutEffect, useRef, useState, type TextareaHTMLAttributes } from "react";
import { ModelPicker } from "../../components/ModelPicker";

export const JUDGE_KEY = "auto_ai_critique";

interface Message {
  role: string;
  content: unknown; // text, or content parts ([{type: "text", text}, …]) as a client may store
}

/** textOf is a message's content as edited: the text, or the JSON of
 * content parts. */
function textOf(m: Message): string {
  return typeof m.content === "string" ? m.content : m.content == null ? "" : JSON.stringify(m.content, null, 2);
}

/** withText puts edited text back: content parts stay parts while the text
 * is their JSON. */
function withText(m: Message, text: string): Message {
  if (typeof m.content === "string" || m.content == null) return { ...m, content: text };
  try {
    return { ...m, content: JSON.parse(text) };
  } catch {
    return { ...m, content: text };
  }
}

const ROLES = ["system", "user", "assistant"];

const REFERENCE = ["correct_answer", "ground_truth", "reference"];

/** The judge's own variables (services/runtime/internal/prompt/judge.go,
 * Judge.Variables): where each comes from. Any other name is a testcase
 * column (online: the trace's input of that name). */
const SOURCES: Record<string, string> = {
  inputs: "all of the testcase's columns (online: the trace's inputs)",
  outputs: "the application's output (online: the trace's output)",
  prediction: "the application's output, as outputs",
  correct_answer: "the testcase's reference answer column (correct_answer_key)",
  ground_truth: "the reference answer, as correct_answer",
  reference: "the reference answer, as correct_answer",
  trace: "the whole evaluated trace (its spans)",
};

// Variables of a template: {{name}}, {{#name}}…{{/name}} sections,
// {{ name.path }}, {{$.inputs.x}}; {name} in f-string templates.
function variableRE(format: string): RegExp {
  return format === "fstring" ? /\{([A-Za-z_][\w.]*)\}/g : /\{\{\{?\s*([#^/&]?)\s*([$A-Za-z_][\w.$\[\]]*)[^{}]*?\}?\}\}/g;
}

/** variablesOf lists the root names the messages use, each once, in
 * order; `$.inputs.x` and `inputs.x` are x's column. A name used only
 * inside its own Mustache section ({{#x}}…{{x}}…{{/x}}) is optional: the
 * section renders nothing when the value is absent. */
export function variablesOf(messages: Message[], format: string): { name: string; optional: boolean }[] {
  const names: string[] = [];
  const re = variableRE(format);
  for (const m of messages) {
    for (const x of textOf(m).matchAll(re)) {
      if (format !== "fstring" && x[1] === "/") continue;
      const parts = (format === "fstring" ? x[1] : x[2]).replace(/^\$\.?/, "").split(/[.[]/);
      const root = parts[0] === "inputs" && parts.length > 1 ? parts[1] : parts[0];
      if (root && !names.includes(root)) names.push(root);
    }
  }
  return names.map((name) => ({ name, optional: format === "mustache" && onlyInItsSection(messages, name) }));
}

/** sampleColumns are the testcase columns a judge's prompt needs (its
 * variables that are neither the judge's own nor optional), so a try-out
 * sample can give each: the reference answer's correct_answer among them. */
export function sampleColumns(params: Record<string, unknown>): string[] {
  const messages = (Array.isArray(params.prompt_template) ? params.prompt_template : []) as Message[];
  const format = (params.template_format as string) || (params.version === "1" || params.version === "2" ? "fstring" : "curly");
  return variablesOf(messages, format)
    .filter((v) => !v.optional && (v.name === "correct_answer" || !SOURCES[v.name]))
    .map((v) => v.name);
}

function onlyInItsSection(messages: Message[], name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const section = new RegExp(`\\{\\{#\\s*${esc}\\s*\\}\\}[\\s\\S]*?\\{\\{/\\s*${esc}\\s*\\}\\}`, "g");
  const use = new RegExp(`\\{\\{\\{?\\s*[&^]?\\s*${esc}(?![\\w])`);
  const text = messages.map(textOf);
  return text.some((t) => new RegExp(section.source).test(t)) && text.every((t) => !use.test(t.replace(section, "")));
}

function sourceOf(name: string): string {
  return SOURCES[name] ?? `the testcase's column “${name}” (online: the trace's input “${name}”)`;
}

/** Highlighted shows a message's content with its variables marked: the
 * backdrop of the text area, drawn in the same font at the same place. */
function Highlighted({ text, format }: { text: string; format: string }) {
  const re = variableRE(format);
  const parts: (string | { v: string })[] = [];
  let last = 0;
  for (const x of text.matchAll(re)) {
    parts.push(text.slice(last, x.index));
    parts.push({ v: x[0] });
    last = (x.index ?? 0) + x[0].length;
  }
  parts.push(text.slice(last));
  return (
    <div className="judge-backdrop" aria-hidden="true">
      {parts.map((p, i) => (typeof p === "string" ? <Fragment key={i}>{p}</Fragment> : <mark key={i}>{p.v}</mark>))}
      {"\n"}
    </div>
  );
}

/** GrowingTextarea is as tall as its text, so the highlighted backdrop
 * under it never needs scrolling in step with it. */
function GrowingTextarea(props: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const ref = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight + 2}px`;
  }, [props.value]);
  return <textarea ref={ref} rows={2} {...props} />;
}

/** JudgeMessages is the prompt_template field. formContext.templateFormat
 * says how variables are written. */
export function JudgeMessages(props: FieldProps) {
  const messages = (Array.isArray(props.formData) ? props.formData : []) as Message[];
  const format = (props.registry.formContext as { templateFormat?: string } | undefined)?.templateFormat ?? "curly";
  const disabled = props.disabled || props.readonly;
  const set = (next: Message[]) => props.onChange(next, props.fieldPathId.path);
  const vars = variablesOf(messages, format);
  return (
    <div className="judge-prompt">
      <div data-testid="judge-messages">
        <strong>Prompt messages</strong>
        {messages.map((m, i) => (
          <div key={i} className="judge-message">
            <div className="toolbar">
              <select
                aria-label={`role of message ${i + 1}`}
                value={m.role}
                disabled={disabled}
                onChange={(e) => set(messages.map((x, k) => (k === i ? { ...x, role: e.currentTarget.value } : x)))}
              >
                {(ROLES.includes(m.role) ? ROLES : [m.role, ...ROLES]).map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
              {!disabled && (
                <button type="button" onClick={() => set(messages.filter((_, k) => k !== i))} aria-label={`remove message ${i + 1}`}>
                  Remove
                </button>
              )}
            </div>
            <div className="judge-editor">
              <Highlighted text={textOf(m)} format={format} />
              <GrowingTextarea
                aria-label={`content of message ${i + 1}`}
                value={textOf(m)}
                disabled={disabled}
                spellCheck={false}
                onChange={(e) => {
                  const text = e.currentTarget.value;
                  set(messages.map((x, k) => (k === i ? withText(x, text) : x)));
                }}
              />
            </div>
          </div>
        ))}
        {!disabled && (
          <button type="button" onClick={() => set([...messages, { role: "user", content: "" }])}>
            Add message
          </button>
        )}
      </div>
      <aside data-testid="judge-variables" className="judge-variables">
        <strong>Variables this prompt needs</strong>
        {vars.length === 0 ? (
          <p className="muted">None: the judge will see only the text above.</p>
        ) : (
          <ul>
            {vars.map((v) => (
              <li key={v.name}>
                <code>{v.name}</code>: {sourceOf(v.name)}
                {v.optional ? (
                  <em> — optional: used only when present</em>
                ) : (
                  REFERENCE.includes(v.name) && <strong className="field-error"> — required: production traces have none, so an online evaluation fails on them; wrap it in {`{{#${v.name}}}…{{/${v.name}}}`}</strong>
                )}
              </li>
            ))}
          </ul>
        )}
        <p className="muted">
          {format === "fstring"
            ? "f-string: {name}."
            : format === "jinja2"
              ? "Jinja2: {{ name }}, {% if name %}…{% endif %}."
              : format === "mustache"
                ? "Mustache: {{name}}; {{#name}}…{{/name}} only when the value is there."
                : "Curly: {{name}}."}{" "}
          A variable that has no value fails the evaluation.
        </p>
      </aside>
    </div>
  );
}

/** JudgeModel is the model field: the configured providers' models. */
export function JudgeModel(props: FieldProps) {
  return (
    <div className="form-group">
      <label>model</label>
      <ModelPicker value={String(props.formData ?? "")} disabled={props.disabled || props.readonly} onChange={(m) => props.onChange(m, props.fieldPathId.path)} />
    </div>
  );
}

/** JudgeSchema is the json_schema field ({name, schema, strict}) as the
 * JSON it is: what the judge must answer (its outputs, the verdict a
 * results column shows). Text that is not a JSON object is kept and named,
 * not saved. */
export function JudgeSchema(props: FieldProps) {
  const shown = JSON.stringify(props.formData ?? {}, null, 2);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState<string | null>(null);
  const [last, setLast] = useState(shown);
  if (shown !== last) {
    // a new value from outside (a preset loaded): show it
    setLast(shown);
    if (!bad) setText(shown);
  }
  return (
    <div className="form-group">
      <label htmlFor="judge-json-schema">the judge's answer (JSON schema)</label>
      <GrowingTextarea
        id="judge-json-schema"
        aria-label="answer schema"
        className="mono"
        style={{ width: "100%", fontFamily: "ui-monospace, monospace", fontSize: 12 }}
        spellCheck={false}
        value={text}
        disabled={props.disabled || props.readonly}
        onChange={(e) => {
          const t = e.currentTarget.value;
          setText(t);
          try {
            const v = JSON.parse(t);
            if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("must be a JSON object {name, schema, strict}");
            setBad(null);
            setLast(JSON.stringify(v, null, 2));
            props.onChange(v, props.fieldPathId.path);
          } catch (err) {
            setBad(err instanceof Error ? err.message : String(err));
          }
        }}
      />
      {bad && (
        <span className="field-error" role="alert">
          Not saved: {bad}
        </span>
      )}
    </div>
  );
}

const OPTION_HELP: Record<string, string> = {
  json_schema: "JSON matching the schema below (score…)",
  json_object: "any JSON object",
  text: "free text: a number or true/false",
  curly: "{{name}}",
  mustache: "{{name}}, sections {{#name}}…{{/name}}",
  fstring: "{name}",
  jinja2: "{{ name }}, {% if %}",
};

/** LabeledSelect is a select named by ui:options.ariaLabel, of the
 * schema's enum or of ui:options.choices (the values the runtime accepts
 * where the schema lists none, so as to refuse no client's value), each
 * option with what it means; an absent value shows the runtime's default. */
export function LabeledSelect(props: WidgetProps) {
  const choices = props.options.choices as string[] | undefined;
  const opts = [...((choices ? choices.map((c) => ({ label: c, value: c })) : (props.options.enumOptions ?? [])) as { label: string; value: unknown }[])];
  if (props.value !== undefined && !opts.some((o) => String(o.value) === String(props.value))) opts.unshift({ label: String(props.value), value: props.value });
  const fallback = String(props.options.runtimeDefault ?? "");
  return (
    <select
      id={props.id}
      aria-label={String(props.options.ariaLabel ?? props.label)}
      value={String(props.value ?? fallback)}
      disabled={props.disabled || props.readonly}
      onChange={(e) => props.onChange(e.currentTarget.value)}
    >
      {opts.map((o) => (
        <option key={String(o.value)} value={String(o.value)}>
          {String(o.value)}
          {OPTION_HELP[String(o.value)] ? ` — ${OPTION_HELP[String(o.value)]}` : ""}
          {String(o.value) === fallback && props.value === undefined ? " (default)" : ""}
        </option>
      ))}
    </select>
  );
}

export const judgeFields = { judgeMessages: JudgeMessages, judgeModel: JudgeModel, judgeSchema: JudgeSchema };
export const judgeWidgets = { labeledSelect: LabeledSelect };

/** judgeUiSchema places the judge's fields: the model first, the prompt,
 * then how the answer is read; the hidden version and connection stay out
 * of sight (the model picker names a custom provider already). */
export function judgeUiSchema(): Record<string, unknown> {
  return {
    "ui:order": ["model", "prompt_template", "response_type", "json_schema", "template_format", "*"],
    model: { "ui:field": "judgeModel" },
    prompt_template: { "ui:field": "judgeMessages" },
    json_schema: { "ui:field": "judgeSchema" },
    response_type: { "ui:widget": "labeledSelect", "ui:title": "response type", "ui:options": { ariaLabel: "response type", runtimeDefault: "json_schema", choices: ["json_schema", "json_object", "text"] } },
    template_format: { "ui:widget": "labeledSelect", "ui:title": "template format", "ui:options": { ariaLabel: "template format", runtimeDefault: "curly" } },
    connection: { "ui:widget": "hidden" },
    version: { "ui:widget": "hidden" },
  };
}
