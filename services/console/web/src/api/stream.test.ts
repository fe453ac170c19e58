import { describe, expect, it } from "vitest";
import { readStream, StreamParser } from "./stream";

const events = [
  { type: "delta", data: { delta: "Par" } },
  { type: "delta", data: { delta: "is ✓" } },
  { type: "done", version: "2025.07.14", status: { code: 200, message: "Success" }, trace_id: "abc", data: { outputs: "Paris ✓" } },
];

function sse(): string {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
}
function ndjson(): string {
  return events.map((e) => JSON.stringify(e) + "\n").join("");
}

// feed pushes text cut into pieces of n characters.
function feed(p: StreamParser, text: string, n: number) {
  const out = [];
  for (let i = 0; i < text.length; i += n) out.push(...p.push(text.slice(i, i + n)));
  out.push(...p.end());
  return out;
}

describe("stream parser", () => {
  for (const n of [1, 3, 7, 1000]) {
    it(`reads SSE cut every ${n} characters`, () => {
      expect(feed(new StreamParser("sse"), sse(), n)).toEqual(events);
    });
    it(`reads NDJSON cut every ${n} characters`, () => {
      expect(feed(new StreamParser("ndjson"), ndjson(), n)).toEqual(events);
    });
  }

  it("handles CRLF, comments, multi-line data and a last event without a blank line", () => {
    const text = ': keep-alive\r\ndata: {"type":"delta",\r\ndata: "data":{"delta":"a"}}\r\n\r\nevent: x\r\ndata: {"type":"done"}';
    expect(feed(new StreamParser("sse"), text, 5)).toEqual([{ type: "delta", data: { delta: "a" } }, { type: "done" }]);
  });

  it("reports a malformed line as an error event", () => {
    const out = feed(new StreamParser("ndjson"), '{"type":"delta","data":{"delta":"x"}}\n{oops\n\n', 4);
    expect(out[0]).toEqual({ type: "delta", data: { delta: "x" } });
    expect(out[1].type).toBe("error");
    expect(out[1].status?.message).toMatch(/malformed event/);
    expect(out).toHaveLength(2);
  });

  it("reads a fetch body chunk by chunk, multi-byte characters split across chunks", async () => {
    const bytes = new TextEncoder().encode(sse());
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 5) c.enqueue(bytes.slice(i, i + 5));
        c.close();
      },
    });
    const got: unknown[] = [];
    await readStream(new Response(body), "sse", (e) => got.push(e));
    expect(got).toEqual(events);
  });
});
