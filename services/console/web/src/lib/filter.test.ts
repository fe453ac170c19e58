import { describe, expect, it } from "vitest";
import { FilterError, rowToCondition, toFiltering, type FilterRow } from "./filter";

const row = (r: Partial<FilterRow> & Pick<FilterRow, "kind" | "target" | "operator">): FilterRow => ({ id: "x", value: "", ...r });

describe("filter builder → filter language", () => {
  it("translates fields, attributes, metrics and references", () => {
    const rows: FilterRow[] = [
      row({ kind: "field", target: "span_name", operator: "contains", value: "retrieve" }),
      row({ kind: "field", target: "status_code", operator: "is", value: "STATUS_CODE_ERROR" }),
      row({ kind: "field", target: "span_type", operator: "in", value: "llm, chat" }),
      row({ kind: "attribute", target: "ag.meta.request.model", operator: "is", value: "gpt-4o" }),
      row({ kind: "attribute", target: "ag.data.inputs.n", operator: "gte", value: "3" }),
      row({ kind: "attribute", target: "ag.tags.env", operator: "exists", value: "" }),
      row({ kind: "metric", target: "costs.cumulative.total", operator: "gt", value: "0.05" }),
      row({ kind: "metric", target: "duration.cumulative", operator: "btwn", value: "100, 2000" }),
      row({ kind: "reference", target: "application", operator: "in", value: "rag-app, chat-app", refBy: "slug" }),
      row({ kind: "reference", target: "testset_revision", operator: "in", value: "0190aaaa-0000-7000-8000-000000000001", refBy: "id" }),
    ];
    expect(toFiltering(rows)).toEqual({
      operator: "and",
      conditions: [
        { field: "span_name", operator: "contains", value: "retrieve" },
        { field: "status_code", operator: "is", value: "STATUS_CODE_ERROR" },
        { field: "span_type", operator: "in", value: ["llm", "chat"] },
        { field: "attributes", key: "ag.meta.request.model", operator: "is", value: "gpt-4o" },
        { field: "attributes", key: "ag.data.inputs.n", operator: "gte", value: 3 },
        { field: "attributes", key: "ag.tags.env", operator: "exists" },
        { field: "attributes", key: "ag.metrics.costs.cumulative.total", operator: "gt", value: 0.05 },
        { field: "attributes", key: "ag.metrics.duration.cumulative", operator: "btwn", value: [100, 2000] },
        {
          field: "references",
          operator: "in",
          value: [
            { slug: "rag-app", attributes: { key: "application" } },
            { slug: "chat-app", attributes: { key: "application" } },
          ],
        },
        {
          field: "references",
          operator: "in",
          value: [{ id: "0190aaaa-0000-7000-8000-000000000001", attributes: { key: "testset_revision" } }],
        },
      ],
    });
  });

  it("keeps ids and names as text even when they look like numbers; attribute values are typed", () => {
    expect(rowToCondition(row({ kind: "field", target: "session_id", operator: "is", value: "12345" }))).toEqual({
      field: "session_id",
      operator: "is",
      value: "12345",
    });
    expect(rowToCondition(row({ kind: "attribute", target: "ag.flags.is_web", operator: "is", value: "true" })).value).toBe(true);
    expect(rowToCondition(row({ kind: "attribute", target: "ag.data.inputs.k", operator: "is", value: "42" })).value).toBe(42);
  });

  it("puts the fixed conditions around the user's combinator", () => {
    const rows = [
      row({ kind: "field", target: "span_name", operator: "is", value: "a" }),
      row({ kind: "field", target: "span_name", operator: "is", value: "b" }),
    ];
    expect(toFiltering(rows, "or", [{ field: "parent_id", operator: "is", value: null }])).toEqual({
      operator: "and",
      conditions: [
        { field: "parent_id", operator: "is", value: null },
        {
          operator: "or",
          conditions: [
            { field: "span_name", operator: "is", value: "a" },
            { field: "span_name", operator: "is", value: "b" },
          ],
        },
      ],
    });
    expect(toFiltering([], "and")).toBeUndefined();
    expect(toFiltering([], "or", [{ field: "session_id", value: "s" }])).toEqual({ operator: "and", conditions: [{ field: "session_id", value: "s" }] });
  });

  it("refuses rows it cannot translate, naming the row", () => {
    expect(() => rowToCondition(row({ id: "r1", kind: "metric", target: "duration.cumulative", operator: "gt", value: "fast" }))).toThrow(FilterError);
    expect(() => rowToCondition(row({ id: "r2", kind: "metric", target: "duration.cumulative", operator: "btwn", value: "1" }))).toThrow(/two numbers/);
    expect(() => rowToCondition(row({ id: "r3", kind: "field", target: "span_name", operator: "is", value: " " }))).toThrow(/value is required/);
    try {
      rowToCondition(row({ id: "r4", kind: "attribute", target: "", operator: "is", value: "x" }));
    } catch (e) {
      expect((e as FilterError).rowId).toBe("r4");
    }
  });
});
