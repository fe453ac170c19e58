import { describe, expect, it } from "vitest";
import { shownHistory } from "./TestsetPage";
import { numWidth } from "./Grid";
import type { TestsetRevision } from "../../api/testsets";

const rev = (version: string, ids?: string[], message?: string): TestsetRevision => ({
  id: "r" + version,
  slug: "s" + version,
  version,
  testset_id: "t",
  testset_variant_id: "v",
  message,
  data: ids ? { testcase_ids: ids } : undefined,
});

describe("testset history", () => {
  it("shows an upload as one version: the empty v0 of the create is left out", () => {
    const h = shownHistory([rev("1", ["a", "b"], "Uploaded capitals.csv (2 rows)"), rev("0", undefined, "Initial commit")]);
    expect(h.map((r) => r.version)).toEqual(["1"]);
  });

  it("keeps a v0 with rows, and a lone v0", () => {
    expect(shownHistory([rev("0", ["a"]), rev("1", ["a", "b"])]).map((r) => r.version)).toEqual(["0", "1"]);
    expect(shownHistory([rev("0")]).map((r) => r.version)).toEqual(["0"]);
  });
});

describe("grid # column", () => {
  it("is wide enough for the largest row number", () => {
    expect(numWidth(1_200, true)).toBeGreaterThan(numWidth(999, true));
    expect(numWidth(100_000, true)).toBeGreaterThanOrEqual(numWidth(1_200, true) + 20);
  });
});
