// Starts loading the chunk of the page the browser opened while the session probe is in
// flight, instead of after it: a reload of a trace page then waits for the slower of the
// two, not for both in turn. The imports are the same modules routes.tsx loads lazily, so
// the chunk is fetched once.

const PAGES: [RegExp, () => Promise<unknown>][] = [
  [/^\/traces\/[^/]+/, () => import("./pages/traces/TraceView")],
  [/^\/traces\/?$/, () => import("./pages/traces/Traces")],
  [/^\/sessions\/[^/]+/, () => import("./pages/sessions/SessionView")],
  [/^\/analytics/, () => import("./pages/analytics/Analytics")],
  [/^\/queues\/[^/]+/, () => import("./pages/queues/QueueView")],
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
