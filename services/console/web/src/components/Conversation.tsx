import { JsonView } from "./JsonView";

// Chat messages ({role, content, tool_calls?}) shown as a conversation.

export interface Message {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  name?: string;
}

export function isMessages(v: unknown): v is Message[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((m) => m !== null && typeof m === "object" && typeof (m as { role?: unknown }).role === "string")
  );
}

const messageKeys = ["prompt", "messages", "completion", "choices"];

/** Finds the messages of an inputs or outputs value: the value itself, or its prompt,
 * messages or completion member. */
export function messagesOf(v: unknown): Message[] | undefined {
  if (isMessages(v)) return v;
  if (v && typeof v === "object") {
    for (const k of messageKeys) {
      const m = (v as Record<string, unknown>)[k];
      if (isMessages(m)) return m;
    }
  }
  return undefined;
}

/** The members of an inputs or outputs value beside its messages (the tools a model
 * was offered, an agent's own input values), or undefined when there are none: shown
 * under the conversation rather than hidden by it. */
export function besideMessages(v: unknown): Record<string, unknown> | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  const rest: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  const k = messageKeys.find((key) => isMessages(rest[key]));
  if (k === undefined) return undefined;
  delete rest[k];
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function text(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const parts = content.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : null));
    if (parts.every((p) => p !== null)) return parts.join("\n");
  }
  return null;
}

export function Conversation({ messages }: { messages: Message[] }) {
  return (
    <div className="conversation">
      {messages.map((m, i) => {
        const t = text(m.content);
        return (
          <div key={i} className={`message role-${m.role}`}>
            <div className="message-role">
              {m.role}
              {m.name ? ` · ${m.name}` : ""}
            </div>
            {t !== null ? <div className="message-text">{t}</div> : m.content !== undefined && <JsonView value={m.content} />}
            {m.tool_calls !== undefined && (
              <div className="message-tools">
                <span className="muted">tool calls</span>
                <JsonView value={m.tool_calls} openDepth={2} />
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}

/** Inputs or outputs: a conversation when they hold chat messages, else folded JSON. */
export function DataView({ value }: { value: unknown }) {
  if (value === undefined) return <p className="muted">—</p>;
  const msgs = messagesOf(value);
  if (msgs) {
    const rest = besideMessages(value);
    return (
      <>
        <Conversation messages={msgs} />
        {rest && <JsonView value={rest} openDepth={3} />}
      </>
    );
  }
  if (typeof value === "string") return <pre className="text-block">{value}</pre>;
  return <JsonView value={value} />;
}
