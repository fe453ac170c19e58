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

// uPlot (~50 KB) is loaded with the first chart, not with the console.
const Impl = lazy(() => import("./LineChartImpl"));

export function LineChart(props: LineChartProps) {
  return (
    <Suspense fallback={<Loading label="Loading chart…" />}>
      <Impl {...props} />
    </Suspense>
  );
}
