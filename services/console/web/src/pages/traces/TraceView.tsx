import { useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { ag, figures, fmtCost, fmtDuration, traceAnnotations, traceSpans, unpricedModels, type Span } from "../../api/tracing";
import { ErrorBox } from "../../components/ErrorBox";
import { Loading } from "../../components/Loading";
import { JsonView } from "../../components/JsonView";
import { DataView } from "../../components/Conversation";
import { AnnotationForm } from "../../components/AnnotationForm";
import { buildSpanTree } from "../../lib/spanTree";
import { referenceLinks } from "../../lib/references";
import { StatusBadge } from "./SpanTable";
import { Waterfall } from "./Waterfall";
import { AddToQueue } from "../../components/AddToQueue";
import { AddToTestset } from "../../components/AddToTestset";

export default function TraceView() {
  const { traceId = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const q = useQuery({
    queryKey: ["trace", traceId],
    queryFn: ({ signal }) => traceSpans([traceId], signal),
    // Spans are written asynchronously: a trace just ingested may need a moment.
    refetchInterval: (query) => ((query.state.data?.count ?? 0) === 0 && query.state.dataUpdateCount < 10 ? 1000 : false),
  });
  // When the spans arrived (the tree is built in the same render): the waterfall reports
  // how long building and painting took (data-render-ms, read by the e2e measurement).
  const { tree, builtFrom } = useMemo(() => {
    const at = performance.now();
    return { tree: buildSpanTree(q.data?.spans ?? []), builtFrom: at };
  }, [q.data]);
  const selected = params.get("span") ?? tree.roots[0]?.span.span_id;
  const span = selected ? tree.byId.get(selected)?.span : undefined;
  const root = tree.roots[0]?.span;
  const select = (id: string) => {
    const p = new URLSearchParams(params);
    p.set("span", id);
    setParams(p, { replace: true });
  };

  if (q.isLoading) return <Loading />;
  return (
    <section className="page-trace">
      <div className="crumbs">
        <Link to="/traces">Traces</Link> / <span className="mono">{traceId}</span>
      </div>
      <ErrorBox error={q.error} />
      {!q.error && tree.count === 0 && <p className="muted">No span of trace {traceId} is stored (yet).</p>}
      {root && (
        <header className="trace-head">
          <h1>{root.span_name}</h1>
          <TraceFigures span={root} count={tree.count} />
          <UnpricedNote spans={q.data?.spans ?? []} />
          {root.session_id && (
            <Link to={`/sessions/${encodeURIComponent(root.session_id)}`}>Session {root.session_id}</Link>
          )}
          <div className="toolbar">
            <AddToQueue traceIds={[traceId]} label="Add to queue" />
            <AddToTestset traceIds={[traceId]} />
          </div>
        </header>
      )}
      {tree.count > 0 && (
        <div className="trace-split">
          <Waterfall tree={tree} selected={selected} onSelect={select} since={builtFrom} />
          <div className="span-details">{span && <SpanDetails span={span} />}</div>
        </div>
      )}
      {root && <Annotations traceId={traceId} spanId={span?.span_id ?? root.span_id} />}
    </section>
  );
}

function TraceFigures({ span, count }: { span: Span; count?: number }) {
  const f = figures(span);
  return (
    <div className="figures">
      <StatusBadge code={span.status_code} />
      <span>{span.span_type ?? "task"}</span>
      <span title="duration">{fmtDuration(f.durationMs)}</span>
      <span>tokens {f.tokens ?? "—"}</span>
      <span title={f.pricedBy ? `priced by ${f.pricedBy}` : undefined}>cost {fmtCost(f.cost)}</span>
      {f.unpricedModel && (
        <span className="muted" data-testid="unpriced" title="No price table or override has a price for this model; set TRACING_MODEL_PRICES to add one.">
          no price for model {f.unpricedModel}
        </span>
      )}
      {f.model && <span>model {f.model}</span>}
      {count !== undefined && <span>{count} spans</span>}
      <span className="muted">{new Date(span.start_time).toLocaleString()}</span>
    </div>
  );
}

/** Says which models' calls the trace's cost leaves out, since they have no price. */
function UnpricedNote({ spans }: { spans: Span[] }) {
  const models = useMemo(() => unpricedModels(spans), [spans]);
  if (models.length === 0) return null;
  return (
    <p className="muted" data-testid="trace-unpriced">
      The cost leaves out calls to {models.length === 1 ? "a model" : "models"} without a price: {models.join(", ")}.
    </p>
  );
}

function SpanDetails({ span }: { span: Span }) {
  const a = ag(span);
  const data = (a.data ?? {}) as Record<string, unknown>;
  const refs = referenceLinks(span.references);
  const { data: _d, metrics, ...rest } = a;
  void _d;
  return (
    <div className="span-detail" data-testid="span-detail">
      <h2>{span.span_name}</h2>
      <TraceFigures span={span} />
      {span.status_message && <p className="error-message">{span.status_message}</p>}
      <h3>Inputs</h3>
      <DataView value={data.inputs} />
      <h3>Outputs</h3>
      <DataView value={data.outputs} />
      {data.internals !== undefined && (
        <>
          <h3>Internals</h3>
          <JsonView value={data.internals} />
        </>
      )}
      {metrics !== undefined && (
        <>
          <h3>Metrics</h3>
          <JsonView value={metrics} openDepth={3} />
        </>
      )}
      {refs.length > 0 && (
        <>
          <h3>References</h3>
          <ul className="refs">
            {refs.map((r) => (
              <li key={r.key}>{r.to ? <Link to={r.to}>{r.label}</Link> : r.label}</li>
            ))}
          </ul>
        </>
      )}
      {span.links && span.links.length > 0 && (
        <>
          <h3>Links</h3>
          <ul className="refs">
            {span.links.map((l, i) => (
              <li key={i}>
                {l.attributes?.key ?? "link"}:{" "}
                <Link to={`/traces/${l.trace_id}?span=${l.span_id}`} className="mono">
                  {l.trace_id.slice(0, 12)}…/{l.span_id}
                </Link>
              </li>
            ))}
          </ul>
        </>
      )}
      {span.events && span.events.length > 0 && (
        <>
          <h3>Events</h3>
          <JsonView value={span.events} />
        </>
      )}
      <h3>Attributes</h3>
      <JsonView value={{ ag: rest, ...Object.fromEntries(Object.entries(span.attributes ?? {}).filter(([k]) => k !== "ag")) }} openDepth={0} />
      <p className="muted mono">
        span {span.span_id} · kind {span.span_kind}
      </p>
    </div>
  );
}

function Annotations({ traceId, spanId }: { traceId: string; spanId: string }) {
  const q = useQuery({ queryKey: ["annotations", traceId], queryFn: () => traceAnnotations(traceId) });
  const list = q.data?.annotations ?? [];
  return (
    <section className="annotations" aria-label="Annotations">
      <h2>Annotations ({list.length})</h2>
      <ErrorBox error={q.error} />
      {list.length > 0 && (
        <table className="grid" data-testid="annotations">
          <thead>
            <tr>
              <th>Evaluator</th>
              <th>Outputs</th>
              <th>Origin</th>
              <th>When</th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => {
              const ev = a.references?.evaluator;
              return (
                <tr key={a.trace_id + a.span_id}>
                  <td>{ev?.id ? <Link to={`/evaluators/${ev.id}`}>{ev.slug ?? ev.id}</Link> : (ev?.slug ?? "—")}</td>
                  <td>
                    <JsonView value={a.data?.outputs ?? a.data} openDepth={2} />
                  </td>
                  <td>{a.origin}</td>
                  <td className="mono">{a.created_at ? new Date(a.created_at).toLocaleString() : ""}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <AnnotationForm traceId={traceId} spanId={spanId} />
    </section>
  );
}
