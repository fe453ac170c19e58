// The providers and models a project's calls reach (the runtime's GET
// /services/models), and a provider's connection test (POST
// /services/providers/test): the model picker and the secrets page.
import { json } from "./call";

export interface Provider {
  /** What a model names it by: a family ("openai") or a custom provider's slug. */
  name: string;
  /** The family, or "custom". */
  kind: string;
  /** "vault" (a secret of the project) or "environment" (the runtime's key). */
  source: "vault" | "environment" | string;
  slug?: string;
  /** llm_config.model values: a custom provider's as "<slug>/<model>". */
  models: string[];
}

export interface Providers {
  providers: Provider[];
  /** The model a new prompt or judge starts with; "" when nothing is configured. */
  default: string;
}

export interface ProviderCheck {
  provider: string;
  ok: boolean;
  models?: number;
  status?: number;
  error?: string;
  latency_ms: number;
}

export async function listProviders(): Promise<Providers> {
  const r = await json<Partial<Providers>>("GET", "/services/models");
  return { providers: r.providers ?? [], default: r.default ?? "" };
}

export function testProvider(provider: string): Promise<ProviderCheck> {
  return json<ProviderCheck>("POST", "/services/providers/test", { provider });
}

// familyOfModel mirrors the runtime's guess of an unprefixed model's family
// (services/runtime/internal/llm/provider.go).
function familyOfModel(m: string): string | undefined {
  const s = m.toLowerCase();
  if (/^(gpt-|o1|o3|o4|text-embedding-|chatgpt-)/.test(s)) return "openai";
  if (s.startsWith("claude-")) return "anthropic";
  if (s.startsWith("gemini-")) return "gemini";
  if (/^(mistral-|codestral-|ministral-)/.test(s)) return "mistral";
  return undefined;
}

/** providerOf is the configured provider a model reaches, if any: its
 * "<provider>/" prefix, a custom provider listing it, or its family. */
export function providerOf(model: string, ps: Provider[]): Provider | undefined {
  if (!model) return undefined;
  const listed = ps.find((p) => p.models.includes(model));
  if (listed) return listed;
  const [prefix, rest] = model.includes("/") ? [model.slice(0, model.indexOf("/")), model.slice(model.indexOf("/") + 1)] : ["", model];
  if (prefix && rest) {
    const p = ps.find((x) => x.name === prefix);
    if (p) return p;
  }
  const fam = familyOfModel(model);
  return fam ? ps.find((x) => x.kind === fam && x.kind !== "custom" && x.name === fam) : undefined;
}
