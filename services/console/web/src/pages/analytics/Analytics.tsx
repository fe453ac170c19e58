import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { fmtCost, queryAnalytics, type AnalyticsBucket, type MetricSpec } from "../../api/tracing";
import { api } from "../../api/client";
import type { Filtering } from "../../lib/filter";
import { ErrorBox } from "../../components/ErrorBox";
import { LineChart } from "../../components/LineChart";
import { TimeRange, rangeMs } from "../../components/TimeRange";
import { TrafficSwitch } from "../../components/TrafficSwitch";
import { PRODUCTION, showsAllTraffic } from "../../lib/traffic";
import { useSearchParams } from "react-router";

/** f limited to production calls unless all traffic is asked for. */
function scoped(f: Filtering | undefined, all: boolean): Filtering | undefined {
  if (all) return f;
  return { operator: "and", conditions: f ? [...PRODUCTION, f] : PRODUCTION };
}

const P = {
  duration: "attributes.ag.metrics.duration.cumulative",
  tokens: "attributes.ag.metrics.tokens.cumulative.total",
  cost: "attributes.ag.metrics.costs.cumulative.total",
  status: "status_code",
};

const SPECS: MetricSpec[] = [
  { type: "categorical/single", path: P.status },
  { type: "numeric/continuous", path: P.duration },
  { type: "numeric/continuous", path: P.tokens },
  { type: "numeric/continuous", path: P.cost },
];

/** Bucket size in minutes: about 60 points over the range. */
const INTERVAL: Record<string, number> = { "15m": 1, "1h": 1, "24h": 30, "7d": 180, "30d": 720 };

type GroupBy = "none" | "application" | "model" | "name";

interface Group {
  label: string;
  filter?: Filtering;
}

const MODEL_PATHS = ["attributes.ag.meta.response.model", "attributes.ag.meta.request.model"];

function pct(b: AnalyticsBucket, path: string, p: string): number | null {
  const m = b.metrics?.[path]?.pcts;
  if (!m) return null;
  return m[p] ?? m[p.replace(".00", "")] ?? null;
}

function requests(b: AnalyticsBucket): number {
  return b.metrics?.[P.status]?.count ?? 0;
}

function errors(b: AnalyticsBucket): number {
  return b.metrics?.[P.status]?.freq?.find((f) => f.value === "STATUS_CODE_ERROR")?.count ?? 0;
}

/** The bucket's sum at path: 0 when nothing in it carried a value (no tokens spent). */
function sum(b: AnalyticsBucket, path: string): number {
  const m = b.metrics?.[path];
  return m && m.count ? (m.sum ?? 0) : 0;
}

export default function Analytics() {
  const [range, setRange] = useState("24h");
  const [groupBy, setGroupBy] = useState<GroupBy>("none");
  const [params] = useSearchParams();
  const all = showsAllTraffic(params);
  const win = useMemo(() => {
    const now = Date.now();
    return { oldest: new Date(now - rangeMs(range)).toISOString(), newest: new Date(now + 60_000).toISOString(), interval: INTERVAL[range] ?? 60 };
  }, [range]);

  // The groups: every application of the project, or the models and names seen in the range.
  const groups = useQuery({
    queryKey: ["analytics-groups", groupBy, win, all],
    enabled: groupBy !== "none",
    queryFn: async (): Promise<Group[]> => {
      if (groupBy === "application") {
        const r = await api.post<{ applications?: { id: string; slug: string; name?: string }[] }>("/api/simple/applications/query", {});
        return (r.applications ?? []).slice(0, 6).map((a) => ({
          label: a.name || a.slug,
          filter: { conditions: [{ field: "references", operator: "in", value: [{ id: a.id, attributes: { key: "application" } }] }] },
        }));
      }
      const path = groupBy === "model" ? MODEL_PATHS[0] : "span_name";
      const specs: MetricSpec[] = groupBy === "model" ? MODEL_PATHS.map((p) => ({ type: "categorical/single", path: p })) : [{ type: "categorical/single", path }];
      const r = await queryAnalytics({ oldest: win.oldest, newest: win.newest, specs, filter: scoped(undefined, all) });
      const counts = new Map<string, { n: number; path: string }>();
      for (const b of r.buckets ?? []) {
        for (const s of specs) {
          for (const f of b.metrics?.[s.path]?.freq ?? []) {
            if (typeof f.value !== "string") continue;
            const c = counts.get(f.value) ?? { n: 0, path: s.path };
            c.n += f.count;
            counts.set(f.value, c);
          }
        }
      }
      return [...counts.entries()]
        .sort((a, b) => b[1].n - a[1].n)
        .slice(0, 6)
        .map(([v, c]) => ({
          label: v,
          filter:
            c.path === "span_name"
              ? { conditions: [{ field: "span_name", operator: "is", value: v }] }
              : { conditions: [{ field: "attributes", key: c.path.replace(/^attributes\./, ""), operator: "is", value: v }] },
        }));
    },
  });

  const series = useQuery({
    queryKey: ["analytics", win, groupBy, groups.data, all],
    enabled: groupBy === "none" || groups.isSuccess,
    queryFn: async () => {
      const gs: Group[] = groupBy === "none" ? [{ label: "all" }] : (groups.data ?? []);
      return Promise.all(
        gs.map(async (g) => ({ group: g.label, buckets: (await queryAnalytics({ ...win, filter: scoped(g.filter, all), specs: SPECS })).buckets ?? [] })),
      );
    },
  });

  const charts = useMemo(() => {
    // The server answers the buckets that hold spans; the charts show every bucket of the
    // range, empty ones as 0 requests and no percentile.
    const step = (win.interval || 60) * 60;
    const from = Math.floor(Date.parse(win.oldest) / 1000 / step) * step;
    const to = Math.floor(Date.parse(win.newest) / 1000 / step) * step;
    const x: number[] = [];
    for (let t = from; t <= to; t += step) x.push(t);
    const empty = (ts: number): AnalyticsBucket => ({ timestamp: new Date(ts * 1000).toISOString(), interval: win.interval, metrics: {} });
    const data = (series.data ?? []).map((d) => {
      const at = new Map(d.buckets.map((b) => [Math.floor(Date.parse(b.timestamp) / 1000 / step) * step, b]));
      return { group: d.group, buckets: x.map((ts) => at.get(ts) ?? empty(ts)) };
    });
    const first = data[0]?.buckets ?? [];
    const per = (fn: (b: AnalyticsBucket) => number | null) => data.map((d) => ({ label: d.group, values: d.buckets.map(fn) }));
    if (groupBy === "none") {
      return {
        x,
        requests: [
          { label: "requests", values: first.map(requests) },
          { label: "errors", values: first.map(errors), color: "#d92d20" },
        ],
        latency: [
          { label: "p50", values: first.map((b) => pct(b, P.duration, "p50.00")) },
          { label: "p95", values: first.map((b) => pct(b, P.duration, "p95.00")) },
          { label: "p99", values: first.map((b) => pct(b, P.duration, "p99.00")) },
        ],
        tokens: [{ label: "tokens", values: first.map((b) => sum(b, P.tokens)) }],
        cost: [{ label: "cost", values: first.map((b) => sum(b, P.cost)) }],
      };
    }
    return {
      x,
      requests: per(requests),
      errors: per(errors),
      latency: per((b) => pct(b, P.duration, "p95.00")),
      tokens: per((b) => sum(b, P.tokens)),
      cost: per((b) => sum(b, P.cost)),
    };
  }, [series.data, groupBy, win]);

  const totals = useMemo(() => {
    const all = (series.data ?? []).flatMap((d) => d.buckets);
    return {
      requests: all.reduce((a, b) => a + requests(b), 0),
      errors: all.reduce((a, b) => a + errors(b), 0),
      tokens: all.reduce((a, b) => a + sum(b, P.tokens), 0),
      cost: all.reduce((a, b) => a + sum(b, P.cost), 0),
    };
  }, [series.data]);

  return (
    <section className="page-analytics">
      <h1>Analytics</h1>
      <div className="toolbar">
        <TimeRange value={range} onChange={setRange} />
        <select aria-label="Group by" value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
          <option value="none">{all ? "All traces" : "All production traces"}</option>
          <option value="application">Per application</option>
          <option value="model">Per model</option>
          <option value="name">Per trace name</option>
        </select>
        <TrafficSwitch />
        <span className="muted">root spans, by ingest time, {INTERVAL[range]} min buckets</span>
      </div>
      <ErrorBox error={groups.error ?? series.error} />
      {series.isSuccess && (
        <div className="stat-row" data-testid="analytics-totals">
          <div className="stat card">
            <div className="muted">requests</div>
            <strong>{totals.requests}</strong>
          </div>
          <div className="stat card">
            <div className="muted">errors</div>
            <strong>{totals.errors}</strong>
            {totals.requests > 0 && <span className="muted"> ({((totals.errors / totals.requests) * 100).toFixed(1)}%)</span>}
          </div>
          <div className="stat card">
            <div className="muted">tokens</div>
            <strong>{totals.tokens}</strong>
          </div>
          <div className="stat card">
            <div className="muted">cost</div>
            <strong>{fmtCost(totals.cost)}</strong>
          </div>
        </div>
      )}
      {groupBy !== "none" && groups.isSuccess && groups.data.length === 0 && <p className="muted">Nothing to group in this range.</p>}
      {series.isSuccess && charts.x.length > 0 && (
        <div className="charts">
          <LineChart title={groupBy === "none" ? "Requests and errors" : "Requests"} x={charts.x} series={charts.requests} />
          {"errors" in charts && charts.errors && <LineChart title="Errors" x={charts.x} series={charts.errors} />}
          <LineChart title={groupBy === "none" ? "Latency percentiles" : "Latency p95"} x={charts.x} series={charts.latency} unit="ms" />
          <LineChart title="Tokens" x={charts.x} series={charts.tokens} />
          <LineChart title="Cost" x={charts.x} series={charts.cost} unit="$" />
        </div>
      )}
    </section>
  );
}
