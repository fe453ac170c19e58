import { describe, expect, it } from "vitest";
import { scopeOf } from "./OnlineEvaluation";
import { PRODUCTION } from "../../lib/traffic";

describe("scopeOf", () => {
  it("says the sampling rate and the user's conditions, not the production ones", () => {
    expect(
      scopeOf({
        id: "q",
        data: {
          filtering: { operator: "and", conditions: [...PRODUCTION, { operator: "and", conditions: [{ field: "span_name", operator: "contains", value: "prod" }] }] },
          windowing: { rate: 0.5 },
        },
      }),
    ).toBe('50% of production traces where span_name contains "prod"');
    expect(scopeOf({ id: "q", data: { filtering: { conditions: PRODUCTION } } })).toBe("production traces");
  });
});
