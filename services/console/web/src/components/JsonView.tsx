import { useState } from "react";

// A folded JSON view: objects and arrays open to a depth, the rest behind a click, so a
// large span input does not flood the page.

export function JsonView({ value, openDepth = 1 }: { value: unknown; openDepth?: number }) {
  return (
    <div className="json-view mono">
      <JsonNode value={value} depth={0} openDepth={openDepth} />
    </div>
  );
}

// formatNumber drops binary floating-point noise (0.000005399999999999999 reads as
// 0.0000054); the exact value stays in the title.
export function formatNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
}

function scalar(v: unknown) {
  if (typeof v === "string") return <span className="json-str">{JSON.stringify(v)}</span>;
  if (typeof v === "number") return <span className="json-num" title={String(v)}>{formatNumber(v)}</span>;
  if (typeof v === "boolean") return <span className="json-bool">{String(v)}</span>;
  if (v === null) return <span className="json-null">null</span>;
  return <span>{String(v)}</span>;
}

function JsonNode({ value, depth, openDepth, name }: { value: unknown; depth: number; openDepth: number; name?: string }) {
  const isObj = value !== null && typeof value === "object";
  const [open, setOpen] = useState(depth < openDepth);
  const label = name !== undefined ? <span className="json-key">{name}: </span> : null;
  if (!isObj) {
    return (
      <div className="json-line">
        {label}
        {scalar(value)}
      </div>
    );
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
  const brackets = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    return (
      <div className="json-line">
        {label}
        {brackets.join("")}
      </div>
    );
  }
  return (
    <div className="json-node">
      <button type="button" className="json-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? "▾" : "▸"}
      </button>
      {label}
      {open ? (
        <>
          {brackets[0]}
          <div className="json-children">
            {entries.map(([k, v]) => (
              <JsonNode key={k} name={k} value={v} depth={depth + 1} openDepth={openDepth} />
            ))}
          </div>
          {brackets[1]}
        </>
      ) : (
        <span className="muted">
          {brackets[0]} {entries.length} {Array.isArray(value) ? "items" : "keys"} {brackets[1]}
        </span>
      )}
    </div>
  );
}
