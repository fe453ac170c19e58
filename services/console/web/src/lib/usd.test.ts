import { describe, expect, it } from "vitest";
import { usd } from "./usd";

describe("usd", () => {
  it("shows cents from a dime up and three significant digits below", () => {
    expect(usd(0.5)).toBe("$0.50");
    expect(usd(12.345)).toBe("$12.35");
    expect(usd(0)).toBe("$0.00");
    expect(usd(0.000123456)).toBe("$0.000123");
    expect(usd(0.0000015)).toBe("$0.0000015");
    expect(usd(-0.25)).toBe("-$0.25");
  });
});
