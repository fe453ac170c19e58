import { describe, expect, it } from "vitest";
import { wordDiff } from "./wordDiff";

describe("wordDiff", () => {
  it("marks the changed word only", () => {
    expect(wordDiff("echo: Japan", "echo: Nippon")).toEqual([
      { text: "echo: ", op: "same" },
      { text: "Japan", op: "del" },
      { text: "Nippon", op: "ins" },
    ]);
  });
  it("is one piece for equal texts and nothing for two empty ones", () => {
    expect(wordDiff("a b", "a b")).toEqual([{ text: "a b", op: "same" }]);
    expect(wordDiff("", "")).toEqual([]);
  });
});
