import { useSearchParams } from "react-router";
import { ALL_TRAFFIC_PARAM, showsAllTraffic } from "../lib/traffic";

/** The "Show evaluation and annotation traffic" switch of the traces, sessions
 * and analytics pages; its state is the URL's ?traffic=all, so a link keeps it. */
export function TrafficSwitch() {
  const [params, setParams] = useSearchParams();
  const all = showsAllTraffic(params);
  return (
    <label className="inline" title="By default these pages show production calls only: the traces evaluations, evaluators and annotations leave are left out.">
      <input
        type="checkbox"
        checked={all}
        aria-label="Show evaluation and annotation traffic"
        onChange={(e) => {
          const p = new URLSearchParams(params);
          if (e.target.checked) p.set(ALL_TRAFFIC_PARAM, "all");
          else p.delete(ALL_TRAFFIC_PARAM);
          setParams(p, { replace: true });
        }}
      />
      Show evaluation and annotation traffic
    </label>
  );
}
