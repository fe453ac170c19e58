import { createElement, lazy, type ComponentType } from "react";

// Starts loading the chunk of the page the browser opened while the session probe is in
// flight, instead of after it: a reload of a trace page then waits for the slower of the
// two, not for both in turn. The imports are the same modules routes.tsx loads lazily, so
// the chunk is fetched once.

/**
 * lazyPage is React.lazy for a page that may be preloaded: once its module
 * is in, the page renders it straight away instead of through the lazy
 * component. React.lazy suspends on its first render even when the chunk
 * has already arrived, and React then holds the page back until 300 ms
 * after the fallback showed (its Suspense reveal throttle): a third of
 * the comparison page's time to draw on a fast machine.
 */
export function lazyPage<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<{ default: ComponentType<P> }> | undefined;
  const start = () =>
    (pending ??= load().then(
      (m) => {
        loaded = m.default;
        return m;
      },
      (e: unknown) => {
        pending = undefined; // a later render retries
        throw e;
      },
    ));
  const Lazy = lazy(start);
  function Page(props: P) {
    return createElement((loaded ?? Lazy) as ComponentType<P>, props);
  }
  Page.preload = () => start();
  return Page;
}

/** The comparison page: preloaded with the session probe, drawn without a suspend. */
export const ComparePage = lazyPage(() => import("./pages/evaluations/ComparePage"));

const PAGES: [RegExp, () => Promise<unknown>][] = [
  [/^\/traces\/[^/]+/, () => import("./pages/traces/TraceView")],
  [/^\/traces\/?$/, () => import("./pages/traces/Traces")],
  [/^\/sessions\/[^/]+/, () => import("./pages/sessions/SessionView")],
  [/^\/analytics/, () => import("./pages/analytics/Analytics")],
  [/^\/queues\/[^/]+/, () => import("./pages/queues/QueueView")],
  [/^\/evaluations\/compare/, ComparePage.preload],
  // A run's results (not the comparison, /evaluations/compare).
  [/^\/evaluations\/(?!compare\/?$)[^/]+\/?$/, () => import("./pages/evaluations/EvaluationPage")],
];

export function preloadPage(pathname: string): void {
  const path = pathname.replace(/^\/console/, "") || "/";
  for (const [re, load] of PAGES) {
    if (re.test(path)) {
      void load().catch(() => undefined); // the route's own import reports a failure
      return;
    }
  }
}
