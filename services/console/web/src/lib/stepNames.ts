// Names of a run's steps for people: the evaluator's name, the
// application's name with its variant and revision version; never the
// step key ("evaluator-<revision slug>", as the compatible SDKs build it)
// nor a generated slug. Shared by the comparison and the results pages.
import type { Step } from "../api/evaluations";

/** NameBook maps artifact and variant ids (and slugs) to the names people gave them. */
export interface NameBook {
  apps: Map<string, string>;
  variants: Map<string, string>;
  evaluators: Map<string, string>;
}

export const emptyBook: NameBook = { apps: new Map(), variants: new Map(), evaluators: new Map() };

/** A generated slug (12 hex digits, or a UUID) says nothing to a reader. */
const GENERATED = /^([0-9a-f]{12}|[0-9a-f]{32}|[0-9a-f-]{36})$/i;

function named(book: Map<string, string>, ref?: { id?: string; slug?: string }): string | undefined {
  if (!ref) return undefined;
  const n = (ref.id && book.get(ref.id)) || (ref.slug && book.get(ref.slug));
  if (n) return n;
  return ref.slug && !GENERATED.test(ref.slug) ? ref.slug : undefined;
}

/** applicationLabel is "<application> · <variant> v<version>", the variant
 * left out when it has no name of its own (the default variant of a simple
 * create is named after the application). */
export function applicationLabel(step: Step, book: NameBook = emptyBook): string | undefined {
  const r = step.references ?? {};
  const app = named(book.apps, r.application);
  if (!app) return undefined;
  const variant = named(book.variants, r.application_variant);
  const version = r.application_revision?.version;
  return app + (variant && variant !== app ? ` · ${variant}` : "") + (version ? ` v${version}` : "");
}

/** stepName names a step by what it references, else by its key without
 * the kind prefix and generated slug ("evaluator" rather than
 * "evaluator-64e6a4c031c3"). */
export function stepName(key: string, step: Step | undefined, book: NameBook = emptyBook): string {
  const r = step?.references ?? {};
  if (step?.type === "invocation") {
    const l = applicationLabel(step, book);
    if (l) return l;
  }
  const n = named(book.evaluators, r.evaluator) ?? named(book.apps, r.application) ?? r.testset?.slug;
  if (n) return n;
  const m = /^(testset|application|evaluator)-(.*)$/.exec(key);
  if (m && GENERATED.test(m[2])) return m[1];
  return key;
}

/** metricName is a metric path as a reader says it: an evaluator's output
 * leaf ("success"), or what the application's trace measured. */
export function metricName(path: string): string {
  const p = path.replace(/^attributes\.ag\./, "");
  if (p.startsWith("data.outputs.")) return p.slice("data.outputs.".length);
  const known: Record<string, string> = {
    "metrics.duration.cumulative": "latency (ms)",
    "metrics.costs.cumulative.total": "cost ($)",
    "metrics.tokens.cumulative.total": "tokens",
    "metrics.errors.cumulative": "errors",
  };
  return known[p] ?? p.replace(/^metrics\./, "");
}

/** lowerIsBetter: latency, cost, tokens and errors go down when things get
 * better; scores and pass rates go up. */
export function lowerIsBetter(path: string): boolean {
  return /(^|\.)(duration|latency|costs?|tokens|errors?|error_rate)(\.|$)/.test(path.replace(/^attributes\.ag\.data\.outputs\./, "outputs."));
}

/** variantLabel names a variant for a list of revisions: its slug, or
 * "default" for a generated one (the variant a simple create makes with
 * its application has a generated slug, as on the compatible platform). */
export function variantLabel(slug: string | undefined, name?: string): string {
  if (name && (!slug || GENERATED.test(slug))) return name;
  if (!slug) return "";
  return GENERATED.test(slug) ? "default" : slug;
}
