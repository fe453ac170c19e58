import { describe, expect, it } from "vitest";
import { slugOf } from "./slug";

describe("slugOf", () => {
  it("makes the registry's slug of a name", () => {
    expect(slugOf("Capital checker")).toBe("capital-checker");
    expect(slugOf("  Été à Paris!! ")).toBe("ete-a-paris");
    expect(slugOf("¿?")).toBe("");
  });
});
