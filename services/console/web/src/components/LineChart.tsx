import { lazy, Suspense } from "react";
import { Loading } from "./Loading";

export interface LineChartProps {
  title: string;
  /** x values: unix seconds. */
  x: number[];
  series: { label: string; values: (number | null)[]; color?: string }[];
  height?: number;
  unit?: string;
}

/**
 * The marker size of series i. A value with no value on either side draws no
 * line, only its marker: such series get large markers, each series' smaller
 * than the one before, so equal lone values (p50 = p95 = p99 of one busy
 * bucket) show as rings around each other instead of one dot hiding the rest.
 */
export function pointSize(values: (number | null)[], i: number): number {
  const has = (j: number) => j >= 0 && j < values.length && values[j] !== null && values[j] !== undefined;
  const lone = values.some((_, j) => has(j) && !has(j - 1) && !has(j + 1));
  return lone ? Math.max(5, 14 - 3 * i) : 5;
}

// uPlot (~50 KB) is loaded with the first chart, not with the console.
const Impl = lazy(() => import("./LineChartImpl"));

export function LineChart(props: LineChartProps) {
  return (
    <Suspense fallback={<Loading label="Loading chart…" />}>
      <Impl {...props} />
    </Suspense>
  );
}
