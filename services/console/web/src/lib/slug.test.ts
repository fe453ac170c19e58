import { describe, expect, it } from "vitest";
import { freeSlug, slugOf } from "./slug";

describe("slugOf", () => {
  it("keeps the words of the name", () => {
    expect(slugOf("Capitals bot")).toBe("capitals-bot");
    expect(slugOf("Été à Paris!")).toBe("ete-a-paris");
    expect(slugOf("  ---  ")).toBe("");
  });
  it("is unique among the taken slugs", () => {
    expect(freeSlug("Capitals bot", [])).toBe("capitals-bot");
    expect(freeSlug("Capitals bot", ["capitals-bot", "capitals-bot-2"])).toBe("capitals-bot-3");
  });
});
