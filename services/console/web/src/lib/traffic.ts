// Production traffic apart from the platform's own: the traces an
// evaluation, an evaluator or an annotation leaves are marked, and these
// conditions of the tracing filter language keep them out.
//   - annotations (human ones, and every evaluator run that judged a
//     trace: it links to the trace it judged) are stored with trace type
//     "annotation"; production calls are "invocation";
//   - an evaluation invokes the application with a reference to the
//     testcase it runs (services/runtime/internal/evalrun/cell.go), so its
//     application traces carry a "testcase" reference;
//   - an evaluator run carries "evaluator" references (the revision the
//     runtime resolved), also when it judged nothing (a try-out).
// They hold for root spans: a trace's child spans (model calls) carry no
// references of their own.
import type { Condition } from "./filter";

export const PRODUCTION: Condition[] = [
  { field: "trace_type", operator: "is", value: "invocation" },
  { field: "references", operator: "not_in", value: [{ attributes: { key: "testcase" } }, { attributes: { key: "evaluator" } }] },
];

/** The URL parameter of the "Show evaluation and annotation traffic" switch. */
export const ALL_TRAFFIC_PARAM = "traffic";

/** Whether the page's URL asks for every trace (the switch is on). */
export function showsAllTraffic(params: URLSearchParams): boolean {
  return params.get(ALL_TRAFFIC_PARAM) === "all";
}
