// /console/evaluators/:id — an evaluator's parameters (a form generated
// from its template's parameters schema), editable: a saved one commits
// its edited parameters as a new revision; and a try-out on one sample.
// /console/evaluators/new?template=&preset= creates one.
import { useEffect, useMemo, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams, useSearchParams } from "react-router";
import Form from "@rjsf/core";
import { createEvaluator, editEvaluator, getEvaluator, presets, template, tryEvaluator, uriKey, type TryResult } from "../../api/evaluators";
import { ErrorBox } from "../../components/ErrorBox";
import { schemaValidator as validator } from "../../components/schemaValidator";
import { formSchema, uiSchema } from "./schema";
import { runtimeDefaults, switchRuntimeDefault } from "./codeSignature";
import { JUDGE_KEY, judgeFields, sampleColumns, judgeUiSchema, judgeWidgets } from "./judge";
import { defaultModel, useProviders } from "../../components/ModelPicker";
import { slugOf } from "../../lib/slug";

export default function EvaluatorPage() {
  const { id = "" } = useParams();
  const [sp] = useSearchParams();
  const isNew = id === "new";
  const nav = useNavigate();
  const qc = useQueryClient();
  const ev = useQuery({ queryKey: ["evaluator", id], queryFn: () => getEvaluator(id), enabled: !isNew });
  const key = isNew ? sp.get("template") ?? "" : uriKey(ev.data?.data?.uri) ?? "";
  const tpl = useQuery({ queryKey: ["evaluator-template", key], queryFn: () => template(key), enabled: !!key });
  const presetKey = sp.get("preset");
  // Presets are read for every new evaluator: their code is what a runtime switch falls back to.
  const pre = useQuery({ queryKey: ["evaluator-presets", key], queryFn: () => presets(key), enabled: isNew && !!key });
  const preset = pre.data?.find((p) => p.key === presetKey);

  const schema = useMemo(() => formSchema((ev.data?.data?.schemas?.parameters ?? tpl.data?.data.schemas?.parameters) as Record<string, unknown>), [ev.data, tpl.data]);
  const initial = useMemo(
    () => (isNew ? preset?.data.parameters ?? tpl.data?.data.parameters ?? {} : ev.data?.data?.parameters ?? {}),
    [isNew, preset, tpl.data, ev.data],
  );
  const codeDefaults = useMemo(
    () => runtimeDefaults([preset?.data.parameters, tpl.data?.data.parameters, ...(pre.data ?? []).map((p) => p.data.parameters)]),
    [preset, tpl.data, pre.data],
  );
  const [params, setParams] = useState<Record<string, unknown>>({});
  useEffect(() => setParams(initial as Record<string, unknown>), [initial]);
  // A new judge starts on a model the project can call (the catalog's
  // gpt-4o answers 424 in a project with only a custom provider).
  const isJudge = key === JUDGE_KEY;
  const providers = useProviders();
  // Once per template or preset loaded: a later refetch of the providers
  // must not undo the user's own choice.
  const defaulted = useRef<unknown>(null);
  useEffect(() => {
    if (!isNew || !isJudge || !providers.data || defaulted.current === initial) return;
    defaulted.current = initial;
    setParams((p) => {
      const m = defaultModel(p.model as string | undefined, providers.data);
      return m === p.model ? p : { ...p, model: m };
    });
  }, [isNew, isJudge, providers.data, initial]);
  const [name, setName] = useState("");
  const [err, setErr] = useState<unknown>(null);
  const [committed, setCommitted] = useState(false);
  const uri = isNew ? preset?.data.uri ?? tpl.data?.data.uri ?? "" : ev.data?.data?.uri ?? "";

  const create = async () => {
    setErr(null);
    try {
      if (!slugOf(name)) throw new Error("Give the evaluator a name.");
      const e = await createEvaluator(name.trim(), uri, params);
      await qc.invalidateQueries({ queryKey: ["evaluators"] });
      nav(`/evaluators/${e.id}`);
    } catch (e) {
      setErr(e);
    }
  };

  const commit = async () => {
    setErr(null);
    setCommitted(false);
    try {
      if (!ev.data) return;
      await editEvaluator(ev.data, params);
      await qc.invalidateQueries({ queryKey: ["evaluator", id] });
      await qc.invalidateQueries({ queryKey: ["evaluators"] });
      setCommitted(true);
    } catch (e) {
      setErr(e);
    }
  };

  return (
    <div>
      <h1>{isNew ? `New evaluator: ${preset?.name ?? tpl.data?.name ?? key}` : ev.data?.name || ev.data?.slug}</h1>
      {/* What the evaluator does first, in words; its catalog URI after,
          small, for the one who writes it in code. */}
      <p data-testid="evaluator-about">
        {tpl.data?.description}{" "}
        <small className="muted">
          Template: {tpl.data?.name ? `${tpl.data.name} · ` : ""}
          <code>{uri}</code>
        </small>
      </p>
      <ErrorBox error={ev.error || tpl.error || err} />
      {isNew && (
        <p>
          <input placeholder="name" value={name} onChange={(e) => setName(e.currentTarget.value)} aria-label="evaluator name" />{" "}
          {slugOf(name) && (
            <small data-testid="slug-preview">
              slug <code>{slugOf(name)}</code> (a number is added if another evaluator has it)
            </small>
          )}
        </p>
      )}
      <div style={{ display: "grid", gridTemplateColumns: isJudge ? "minmax(0, 3fr) minmax(0, 2fr)" : "1fr 1fr", gap: 16 }}>
        <section data-testid="params-form">
          <h2>Parameters</h2>
          {(tpl.data || ev.data) && (
            <Form
              schema={schema}
              uiSchema={{ ...uiSchema(schema, params), ...(isJudge ? judgeUiSchema() : {}), "ui:submitButtonOptions": { submitText: isNew ? "Create" : "Commit a new revision" } }}
              fields={isJudge ? judgeFields : undefined}
              widgets={isJudge ? judgeWidgets : undefined}
              formContext={{ templateFormat: (params.template_format as string) || (params.version === "1" || params.version === "2" ? "fstring" : "curly") }}
              formData={params}
              validator={validator}
              onChange={(e) => {
                setCommitted(false);
                setParams((prev) => switchRuntimeDefault(prev, (e.formData ?? {}) as Record<string, unknown>, codeDefaults));
              }}
              onSubmit={() => (isNew ? create() : commit())}
            />
          )}
          {committed && (
            <p role="status" data-testid="committed">
              Committed: the evaluator's latest revision has these parameters (new runs use it).
            </p>
          )}
        </section>
        <TryPanel uri={uri} params={params} columns={isJudge ? sampleColumns(params) : null} />
      </div>
    </div>
  );
}

/** SAMPLE is the try-out's testcase: a question and its reference answer
 * (the output below answers it). */
const SAMPLE: Record<string, string> = { country: "France", correct_answer: "Paris" };

/** sampleInputs is the sample's JSON: the reference answer alone for an
 * evaluator comparing with it; for a judge (columns: its prompt's
 * variables) the whole sample and a value for each column its prompt
 * needs (a placeholder to replace when the sample has none). */
function sampleInputs(columns: string[] | null): string {
  if (!columns) return '{"correct_answer": "Paris"}';
  const o: Record<string, string> = { ...SAMPLE };
  for (const c of columns) o[c] ??= `a sample ${c}`;
  return JSON.stringify(o);
}

function TryPanel({ uri, params, columns }: { uri: string; params: Record<string, unknown>; columns: string[] | null }) {
  // Prefilled with a sample giving every column the evaluator needs,
  // following its prompt's variables until the user edits the inputs.
  const need = columns ? columns.join("\u0000") : null;
  const [edited, setEdited] = useState(false);
  const [inputs, setInputs] = useState(() => sampleInputs(columns));
  useEffect(() => {
    if (!edited) setInputs(sampleInputs(need === null ? null : need.split("\u0000").filter(Boolean)));
  }, [need, edited]);
  const [output, setOutput] = useState("Paris");
  const [res, setRes] = useState<TryResult | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const run = async () => {
    setErr(null);
    setRes(null);
    try {
      let out: unknown = output;
      try {
        out = JSON.parse(output);
      } catch {
        /* plain text output */
      }
      setRes(await tryEvaluator(uri, params, JSON.parse(inputs || "{}"), out));
    } catch (e) {
      setErr(e);
    }
  };
  return (
    <section data-testid="try-panel">
      <h2>Try on one sample</h2>
      <label>
        inputs (JSON: the testcase)
        <textarea rows={4} style={{ width: "100%" }} value={inputs} onChange={(e) => {
            setEdited(true);
            setInputs(e.currentTarget.value);
          }}
          aria-label="sample inputs" />
      </label>
      <label>
        output (the application's; JSON or text)
        <textarea rows={3} style={{ width: "100%" }} value={output} onChange={(e) => setOutput(e.currentTarget.value)} aria-label="sample output" />
      </label>
      <button onClick={run} disabled={!uri} data-testid="try-run">
        Evaluate
      </button>
      <ErrorBox error={err} />
      {res && (
        <pre data-testid="try-result" style={{ background: res.error ? "#fff0f0" : "#f0fff0", padding: 6 }}>
          {res.error ? `HTTP ${res.status}: ${res.error}` : JSON.stringify(res.outputs, null, 2)}
        </pre>
      )}
    </section>
  );
}
