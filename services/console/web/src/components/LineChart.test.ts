import { describe, expect, it } from "vitest";
import { pointSize } from "./LineChart";

describe("pointSize", () => {
  it("keeps small markers on lines", () => {
    expect(pointSize([1, 2, 3], 0)).toBe(5);
    expect(pointSize([null, 2, 3, null], 2)).toBe(5);
    expect(pointSize([], 0)).toBe(5);
  });
  it("draws lone values as rings, each series inside the one before", () => {
    const lone = [null, null, 1500, null];
    expect([0, 1, 2].map((i) => pointSize(lone, i))).toEqual([14, 11, 8]);
    expect(pointSize([7], 0)).toBe(14);
    expect(pointSize([1, null, 3], 5)).toBe(5);
  });
});
