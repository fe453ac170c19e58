// A model select listing the models of the project's configured providers
// (custom providers' as <provider slug>/<model>), grouped by provider, and
// "Other model…" for a name not listed (typed by hand). It says when the
// chosen model reaches no configured provider: its calls would answer 424.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { listProviders, providerOf, type Providers } from "../api/models";

const OTHER = "__other__";

export function useProviders() {
  return useQuery({ queryKey: ["model-providers"], queryFn: listProviders, staleTime: 30_000 });
}

/** defaultModel is what a new prompt or judge should use instead of
 * `current` (the catalog's or template's model): a project that added a
 * custom provider means to use it, so its first model wins unless current
 * is already one of a custom provider's; otherwise current when a
 * configured provider reaches it, else the runtime's default (a configured
 * model), else current. */
export function defaultModel(current: string | undefined, p: Providers | undefined): string | undefined {
  if (!p) return current;
  const reached = current ? providerOf(current, p.providers) : undefined;
  const custom = p.providers.find((x) => x.kind === "custom" && x.models.length > 0);
  if (custom) return reached?.kind === "custom" ? current : custom.models[0];
  if (reached) return current;
  return p.default || current;
}

export function ModelPicker({ value, onChange, disabled, label = "model" }: { value: string; onChange: (m: string) => void; disabled?: boolean; label?: string }) {
  const q = useProviders();
  const ps = q.data?.providers ?? [];
  const listed = ps.some((p) => p.models.includes(value));
  const [other, setOther] = useState(false);
  // Until the list is there, the value is shown as it is (not as "Other").
  const showInput = q.isSuccess && (other || (!!value && !listed));
  const reached = providerOf(value, ps);
  return (
    <span className="model-picker">
      <select
        aria-label={label}
        value={showInput ? OTHER : value}
        disabled={disabled}
        onChange={(e) => {
          const v = e.currentTarget.value;
          if (v === OTHER) {
            setOther(true);
          } else {
            setOther(false);
            onChange(v);
          }
        }}
      >
        {!value && !showInput && <option value="">choose a model…</option>}
        {!q.isSuccess && value && <option value={value}>{value}</option>}
        {ps.map((p) => (
          <optgroup key={p.name} label={`${p.name}${p.kind === "custom" ? " (custom provider)" : p.source === "environment" ? " (runtime key)" : ""}`}>
            {p.models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </optgroup>
        ))}
        <option value={OTHER}>Other model…</option>
      </select>
      {showInput && (
        <input
          aria-label={`${label} name`}
          placeholder="<provider slug>/<model>"
          value={value}
          disabled={disabled}
          onChange={(e) => onChange(e.currentTarget.value)}
        />
      )}
      <small className="muted" style={{ display: "block" }}>
        {q.isError ? (
          <span role="alert">The configured models could not be listed: {q.error instanceof Error ? q.error.message : String(q.error)}</span>
        ) : q.isSuccess && ps.length === 0 ? (
          <>
            No provider is configured: <Link to="/settings/secrets">add a provider key or a custom provider</Link>.
          </>
        ) : value && q.isSuccess && !reached ? (
          <span role="alert">
            No configured provider serves <code>{value}</code>: pick one above, or <Link to="/settings/secrets">add its provider</Link>. A custom
            provider's models are named <code>&lt;provider slug&gt;/&lt;model&gt;</code>.
          </span>
        ) : (
          <>
            A custom provider's models are named <code>&lt;provider slug&gt;/&lt;model&gt;</code>.
          </>
        )}
      </small>
    </span>
  );
}
