import { describe, expect, it } from "vitest";
import { useState } from "react";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { FilterBuilder } from "./FilterBuilder";
import { toFiltering, type FilterRow } from "../lib/filter";

function Harness() {
  const [rows, setRows] = useState<FilterRow[]>([]);
  const [combine, setCombine] = useState<"and" | "or">("and");
  let out = "";
  try {
    out = JSON.stringify(toFiltering(rows, combine) ?? null);
  } catch (e) {
    out = "error: " + (e as Error).message;
  }
  return (
    <>
      <FilterBuilder
        rows={rows}
        combine={combine}
        onChange={(r, c) => {
          setRows(r);
          setCombine(c);
        }}
      />
      <pre data-testid="json">{out}</pre>
    </>
  );
}

const json = () => JSON.parse(screen.getByTestId("json").textContent || "null");

describe("FilterBuilder", () => {
  it("builds the filter JSON from what the user picks and types", () => {
    render(<Harness />);
    expect(json()).toBeNull();

    // Row 1: span type in llm, chat.
    fireEvent.click(screen.getByText("+ Filter"));
    let row = document.querySelectorAll(".filter-row")[0] as HTMLElement;
    fireEvent.change(within(row).getByLabelText("Field"), { target: { value: "span_type" } });
    fireEvent.change(within(row).getByLabelText("Operator"), { target: { value: "in" } });
    fireEvent.change(within(row).getByLabelText("Value"), { target: { value: "llm, chat" } });

    // Row 2: cost > 0.5 (a metric).
    fireEvent.click(screen.getByText("+ Filter"));
    row = document.querySelectorAll(".filter-row")[1] as HTMLElement;
    fireEvent.change(within(row).getByLabelText("Filter on"), { target: { value: "metric" } });
    fireEvent.change(within(row).getByLabelText("Metric"), { target: { value: "costs.cumulative.total" } });
    fireEvent.change(within(row).getByLabelText("Value"), { target: { value: "0.5" } });

    // Row 3: the application reference by slug.
    fireEvent.click(screen.getByText("+ Filter"));
    row = document.querySelectorAll(".filter-row")[2] as HTMLElement;
    fireEvent.change(within(row).getByLabelText("Filter on"), { target: { value: "reference" } });
    fireEvent.change(within(row).getByLabelText("Value"), { target: { value: "my-app" } });

    fireEvent.change(screen.getByLabelText("Combine"), { target: { value: "or" } });
    expect(json()).toEqual({
      operator: "or",
      conditions: [
        { field: "span_type", operator: "in", value: ["llm", "chat"] },
        { field: "attributes", key: "ag.metrics.costs.cumulative.total", operator: "gt", value: 0.5 },
        { field: "references", operator: "in", value: [{ slug: "my-app", attributes: { key: "application" } }] },
      ],
    });

    // Switching a field keeps only operators it accepts; removing a row drops it.
    row = document.querySelectorAll(".filter-row")[0] as HTMLElement;
    fireEvent.change(within(row).getByLabelText("Field"), { target: { value: "content" } });
    expect((within(row).getByLabelText("Operator") as HTMLSelectElement).value).toBe("contains");
    fireEvent.click(within(document.querySelectorAll(".filter-row")[1] as HTMLElement).getByLabelText("Remove filter"));
    expect(document.querySelectorAll(".filter-row")).toHaveLength(2);
    expect(screen.getByTestId("json").textContent).toBe("error: a value is required");
  });
});
