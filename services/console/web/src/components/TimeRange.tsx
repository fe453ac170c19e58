export const RANGES: { key: string; label: string; ms: number }[] = [
  { key: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { key: "1h", label: "Last hour", ms: 3_600_000 },
  { key: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { key: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
  { key: "30d", label: "Last 30 days", ms: 30 * 86_400_000 },
];

export function rangeMs(key: string): number {
  return (RANGES.find((r) => r.key === key) ?? RANGES[2]).ms;
}

export function TimeRange({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  return (
    <select aria-label="Time range" value={value} onChange={(e) => onChange(e.target.value)}>
      {RANGES.map((r) => (
        <option key={r.key} value={r.key}>
          {r.label}
        </option>
      ))}
    </select>
  );
}
