import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { listEvaluators, type SimpleEvaluator } from "../api/registry";
import { createAnnotation } from "../api/tracing";
import { ErrorBox } from "./ErrorBox";
import { SchemaForm } from "./SchemaForm";

/** The outputs schema of an evaluator, or a free-form one when it has none. */
export function outputsSchema(ev: SimpleEvaluator | undefined): Record<string, unknown> {
  const s = ev?.data?.schemas?.outputs;
  if (s && typeof s === "object" && Object.keys(s).length) return s;
  return { type: "object", properties: { score: { type: "number" }, comment: { type: "string" } } };
}

/** Adds an annotation to a trace's span with a form generated from the chosen
 * evaluator's outputs schema. */
export function AnnotationForm({ traceId, spanId, onDone }: { traceId: string; spanId: string; onDone?: () => void }) {
  const qc = useQueryClient();
  const evs = useQuery({ queryKey: ["evaluators"], queryFn: listEvaluators });
  const [evId, setEvId] = useState("");
  const [data, setData] = useState<unknown>(undefined);
  // A new form after each save: rjsf keeps the values it shows when its
  // formData goes back to undefined, so the saved values stayed in the
  // fields and the next save sent them again.
  const [saved, setSaved] = useState(0);
  const ev = evs.data?.evaluators?.find((e) => e.id === evId);
  const m = useMutation({
    mutationFn: (outputs: unknown) =>
      createAnnotation({
        evaluator: ev ? { id: ev.id, slug: ev.slug } : { slug: "feedback" },
        outputs,
        link: { trace_id: traceId, span_id: spanId },
      }),
    onSuccess: () => {
      setData(undefined);
      setSaved((n) => n + 1);
      // Annotations are written through the span stream: ask again shortly.
      void qc.invalidateQueries({ queryKey: ["annotations", traceId] });
      setTimeout(() => void qc.invalidateQueries({ queryKey: ["annotations", traceId] }), 1500);
      onDone?.();
    },
  });
  return (
    <div className="annotation-form card">
      <h3>Add an annotation</h3>
      <ErrorBox error={evs.error} title="Evaluators" />
      <label>
        Evaluator
        <select aria-label="Evaluator" value={evId} onChange={(e) => setEvId(e.target.value)}>
          <option value="">— choose —</option>
          {(evs.data?.evaluators ?? []).map((e) => (
            <option key={e.id} value={e.id}>
              {e.name || e.slug}
            </option>
          ))}
        </select>
      </label>
      {ev && (
        <SchemaForm
          key={`${ev.id}:${saved}`}
          schema={outputsSchema(ev)}
          formData={data}
          onChange={(d) => {
            setData(d);
            // "Annotation saved." speaks of the last save: it goes once the
            // user types the next one (the new form's own {} is not typing).
            if (m.isSuccess && d && JSON.stringify(d) !== "{}") m.reset();
          }}
          onSubmit={(d) => m.mutate(d)}
          disabled={m.isPending}
          submitLabel={m.isPending ? "Saving…" : "Save annotation"}
        />
      )}
      <ErrorBox error={m.error} title="Not saved" />
      {m.isSuccess && (
        <p className="notice ok" role="status">
          Annotation saved.
        </p>
      )}
    </div>
  );
}
