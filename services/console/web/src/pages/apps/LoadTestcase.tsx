import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { latestRevision, listTestsets } from "../../api/testsets";

/**
 * Fills the playground's template variables from a testcase: a testset, then
 * one of its rows (named by its first values); each variable takes the
 * row's column of the same name, the others are left as they are.
 */
export function LoadTestcase({ vars, onLoad }: { vars: string[]; onLoad: (values: Record<string, string>) => void }) {
  const sets = useQuery({ queryKey: ["testsets"], queryFn: listTestsets });
  const [testsetId, setTestsetId] = useState("");
  const rev = useQuery({ queryKey: ["testset-latest", testsetId], queryFn: () => latestRevision(testsetId), enabled: !!testsetId });
  const rows = rev.data?.data?.testcases ?? [];
  const [loaded, setLoaded] = useState("");
  // The row loaded stays shown in the picker, by its values.
  const [picked, setPicked] = useState("");
  // A row is named by the values it gives the variables (then its other columns).
  const label = (data: Record<string, unknown>) =>
    [...vars.filter((k) => k in data), ...Object.keys(data).filter((k) => !vars.includes(k))]
      .filter((k) => !k.startsWith("__") && !k.startsWith("testcase_"))
      .map((k) => data[k])
      .slice(0, 2)
      .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
      .join(" · ")
      .slice(0, 60);
  return (
    <div className="toolbar load-testcase">
      <span className="muted">Load a testcase:</span>
      <select aria-label="Testcase testset" value={testsetId} onChange={(e) => {
          setTestsetId(e.target.value);
          setPicked("");
        }}
      >
        <option value="">testset…</option>
        {(sets.data ?? [])
          .filter((s) => !s.deleted_at)
          .map((s) => (
            <option key={s.id} value={s.id}>
              {s.name || s.slug}
            </option>
          ))}
      </select>
      {testsetId && (
        <select
          aria-label="Testcase"
          value={picked}
          onChange={(e) => {
            const tc = rows[Number(e.target.value)];
            if (!tc) return;
            setPicked(e.target.value);
            const values: Record<string, string> = {};
            for (const v of vars) {
              const x = tc.data[v];
              if (x !== undefined) values[v] = typeof x === "string" ? x : JSON.stringify(x);
            }
            onLoad(values);
            const missing = vars.filter((v) => !(v in values));
            setLoaded(`Loaded testcase ${Number(e.target.value) + 1}${missing.length ? `; no column for ${missing.join(", ")}` : ""}.`);
          }}
        >
          <option value="">{rev.isLoading ? "loading…" : `pick one of ${rows.length} testcase${rows.length === 1 ? "" : "s"}`}</option>
          {rows.map((r, i) => (
            <option key={r.id ?? i} value={i}>
              {i + 1}. {label(r.data)}
            </option>
          ))}
        </select>
      )}
      {loaded && (
        <span className="muted" role="status">
          {loaded}
        </span>
      )}
    </div>
  );
}
