// The playground of a chat application: a conversation instead of one
// output. The user's message is sent with the whole history so far as the
// chat template's `messages` input (the runtime renders the prompt's own
// messages, then the history: services/runtime/internal/invoke), the
// answer is appended as the assistant's turn, and each answer shows its
// figures (latency, tokens, cost) from its trace.
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import { RunFigures } from "./RunFigures";

export interface Turn {
  role: "user" | "assistant";
  content: string;
  /** The answer's trace, round trip and error (assistant turns). */
  traceId?: string;
  elapsedMs?: number;
  error?: string;
  pending?: boolean;
}

/** isChatURI tells a chat application's revision (the catalog's chat
 * template, agenta:builtin:chat:v0) from a completion one. */
export function isChatURI(uri: string | undefined): boolean {
  return !!uri && /(^|:)chat(:|$)/.test(uri);
}

/** history is what the next call sends as inputs.messages: the turns
 * answered so far (a failed answer is left out) and the new message. */
export function history(turns: Turn[], message: string): { role: string; content: string }[] {
  const out = turns.filter((t) => !t.error && !t.pending && t.content !== "").map((t) => ({ role: t.role, content: t.content }));
  return [...out, { role: "user", content: message }];
}

/** answerText is an assistant answer's text: the streamed text, else the
 * content of the chat output ({role, content}). */
export function answerText(streamed: string, outputs: unknown): string {
  if (streamed) return streamed;
  if (outputs && typeof outputs === "object" && "content" in outputs) return String((outputs as { content: unknown }).content ?? "");
  return typeof outputs === "string" ? outputs : outputs === undefined ? "" : JSON.stringify(outputs);
}

export function ChatView({
  turns,
  running,
  canRun,
  why,
  onSend,
  onClear,
}: {
  turns: Turn[];
  running: boolean;
  canRun: boolean;
  why?: string;
  onSend: (message: string) => void;
  onClear: () => void;
}) {
  const [draft, setDraft] = useState("");
  // The conversation scrolls in its own box, kept at its latest turn, so
  // the message box stays in view however long the conversation grows.
  const list = useRef<HTMLOListElement>(null);
  const last = turns[turns.length - 1];
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [turns.length, last?.content, last?.pending]);
  const send = () => {
    const m = draft.trim();
    if (!m) return;
    onSend(m);
    setDraft("");
  };
  return (
    <div data-testid="chat">
      <ol ref={list} className="chat-conversation" aria-label="conversation">
        {turns.length === 0 && <li className="muted">No messages yet: type one below. The prompt's messages (under Prompt and model) come first, then the conversation.</li>}
        {turns.map((t, i) => (
          <li
            key={i}
            data-testid={`chat-turn-${t.role}`}
            style={{ margin: "4px 0", padding: 6, borderRadius: 4, background: t.role === "user" ? "#eef4ff" : "#f6f6f6", marginLeft: t.role === "user" ? 40 : 0, marginRight: t.role === "user" ? 0 : 40 }}
          >
            <small className="muted">{t.role}</small>
            <div style={{ whiteSpace: "pre-wrap" }} data-testid="chat-content">
              {t.content}
              {t.pending && !t.content && "…"}
            </div>
            {t.error && (
              <p role="alert" style={{ color: "#b00", margin: 0 }}>
                {t.error}
              </p>
            )}
            {t.role === "assistant" && !t.pending && (t.traceId || t.elapsedMs !== undefined) && <RunFigures traceId={t.traceId} elapsedMs={t.elapsedMs} />}
            {t.traceId && !t.pending && (
              <small>
                <Link to={`/traces/${t.traceId}`}>trace {t.traceId.slice(0, 12)}…</Link>
              </small>
            )}
          </li>
        ))}
      </ol>
      <textarea
        rows={2}
        style={{ width: "100%" }}
        placeholder="Type a message; Enter sends, Shift+Enter starts a new line"
        value={draft}
        onChange={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            if (!running && canRun) send();
          }
        }}
        aria-label="chat message"
      />
      <div style={{ display: "flex", gap: 6 }}>
        <button onClick={send} disabled={running || !canRun || !draft.trim()} title={canRun ? undefined : why} data-testid="chat-send">
          {running ? "Answering…" : "Send"}
        </button>
        <button onClick={onClear} disabled={running || turns.length === 0} data-testid="chat-clear">
          Clear conversation
        </button>
      </div>
    </div>
  );
}
