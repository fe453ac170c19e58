import { describe, expect, it } from "vitest";
import { answerText, history, isChatURI } from "./Chat";

describe("chat playground", () => {
  it("tells a chat application by its uri", () => {
    expect(isChatURI("agenta:builtin:chat:v0")).toBe(true);
    expect(isChatURI("agenta:builtin:completion:v0")).toBe(false);
    expect(isChatURI(undefined)).toBe(false);
  });
  it("sends the answered turns and the new message", () => {
    const turns = [
      { role: "user" as const, content: "Hi" },
      { role: "assistant" as const, content: "echo: Hi" },
      { role: "user" as const, content: "Again" },
      { role: "assistant" as const, content: "", error: "HTTP 424: no key" },
    ];
    expect(history(turns, "Third")).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "echo: Hi" },
      { role: "user", content: "Again" },
      { role: "user", content: "Third" },
    ]);
  });
  it("reads an answer's text from the stream or the chat output", () => {
    expect(answerText("streamed", undefined)).toBe("streamed");
    expect(answerText("", { role: "assistant", content: "whole" })).toBe("whole");
  });
});
