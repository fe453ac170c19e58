import { describe, expect, it } from "vitest";
import { formatNumber } from "./JsonView";

describe("formatNumber", () => {
  it("drops binary floating-point noise and keeps integers and real digits", () => {
    expect(formatNumber(0.000005399999999999999)).toBe("0.0000054");
    expect(formatNumber(0.1 + 0.2)).toBe("0.3");
    expect(formatNumber(42)).toBe("42");
    expect(formatNumber(1.23456789)).toBe("1.23456789");
  });
});
