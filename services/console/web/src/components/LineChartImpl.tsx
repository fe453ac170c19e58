import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { pointSize, type LineChartProps } from "./LineChart";

const COLORS = ["#3451b2", "#d92d20", "#12b76a", "#f79009", "#7f56d9", "#2e90fa", "#667085", "#c11574"];

export default function LineChartImpl({ title, x, series, height = 220, unit }: LineChartProps) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const node = el.current;
    if (!node) return;
    const width = Math.max(node.clientWidth || 600, 300);
    const opts: uPlot.Options = {
      title,
      width,
      height,
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? COLORS[i % COLORS.length],
          width: 2,
          points: { show: true, size: pointSize(s.values, i), width: 2 },
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? "—" : `${+v.toPrecision(4)}${unit ? " " + unit : ""}`),
        })),
      ],
      axes: [{}, { size: 64, values: (_u: uPlot, vals: number[]) => vals.map((v) => (v === 0 ? "0" : Math.abs(v) < 0.01 ? v.toExponential(1) : String(+v.toPrecision(4)))) }],
      scales: { x: { time: true } },
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, node);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(node.clientWidth, 300), height }));
    ro.observe(node);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [title, x, series, height, unit]);
  return <div ref={el} className="chart" role="img" aria-label={title} />;
}
