// Parsing of the runtime's streamed invocations (docs/reference/runtime.md,
// streaming): `Accept: text/event-stream` sends SSE `data:` lines,
// `application/x-ndjson` one JSON object per line. Either way the events
// are {"type":"delta","data":{"delta":"…"}} per piece, then one
// {"type":"done", …envelope…} or {"type":"error", …}. The parser is fed
// the decoded text as it arrives, in chunks cut anywhere (mid-line,
// mid-character is handled by the TextDecoder upstream), and returns the
// events completed so far.

export type StreamFormat = "sse" | "ndjson";

export interface StreamEvent {
  type: "delta" | "done" | "error" | string;
  data?: { delta?: string; outputs?: unknown } & Record<string, unknown>;
  status?: { code?: number; message?: string; type?: string };
  trace_id?: string;
  span_id?: string;
  [k: string]: unknown;
}

export class StreamParser {
  private buf = "";
  private sseData: string[] = [];
  constructor(readonly format: StreamFormat) {}

  /** push feeds a chunk of text; it returns the events it completed. */
  push(chunk: string): StreamEvent[] {
    this.buf += chunk;
    const out: StreamEvent[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      let line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      this.line(line, out);
    }
    return out;
  }

  /** end flushes what is left when the body is over. */
  end(): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (this.buf !== "") {
      this.line(this.buf, out);
      this.buf = "";
    }
    if (this.format === "sse") this.dispatch(out);
    return out;
  }

  private line(line: string, out: StreamEvent[]) {
    if (this.format === "ndjson") {
      if (line.trim() !== "") out.push(decode(line));
      return;
    }
    // SSE: a blank line dispatches the event; "data:" lines accumulate
    // (joined by "\n"); comments (":") and other fields are ignored.
    if (line === "") {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.sseData.push(value);
  }

  private dispatch(out: StreamEvent[]) {
    if (this.sseData.length === 0) return;
    const text = this.sseData.join("\n");
    this.sseData = [];
    if (text === "[DONE]") return;
    out.push(decode(text));
  }
}

function decode(text: string): StreamEvent {
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return v as StreamEvent;
    return { type: "error", status: { message: `not an event object: ${text.slice(0, 200)}` } };
  } catch {
    return { type: "error", status: { message: `malformed event: ${text.slice(0, 200)}` } };
  }
}

/** readStream reads a fetch Response body through a parser, calling
 * onEvent per event; it resolves when the body ends. */
export async function readStream(
  res: Response,
  format: StreamFormat,
  onEvent: (e: StreamEvent) => void,
): Promise<void> {
  const p = new StreamParser(format);
  if (!res.body) {
    for (const e of [...p.push(await res.text()), ...p.end()]) onEvent(e);
    return;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const e of p.push(dec.decode(value, { stream: true }))) onEvent(e);
  }
  for (const e of [...p.push(dec.decode()), ...p.end()]) onEvent(e);
}
