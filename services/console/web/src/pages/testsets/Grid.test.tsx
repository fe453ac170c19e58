import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { Grid, ROW_HEIGHT } from "./Grid";

// jsdom has no layout: every element gets a fixed client size, which is
// what the virtualiser measures its scroller with.
const VIEW = 560;
let restore: (() => void)[] = [];
beforeAll(() => {
  for (const [prop, value] of [
    ["clientHeight", VIEW],
    ["clientWidth", 1000],
  ] as const) {
    const d = Object.getOwnPropertyDescriptor(HTMLElement.prototype, prop);
    Object.defineProperty(HTMLElement.prototype, prop, { configurable: true, get: () => value });
    restore.push(() => (d ? Object.defineProperty(HTMLElement.prototype, prop, d) : delete (HTMLElement.prototype as unknown as Record<string, unknown>)[prop]));
  }
});
afterEach(cleanup);
afterAll(() => {
  restore.forEach((f) => f());
  restore = [];
});

const N = 100_000;
const rows = Array.from({ length: N }, (_, i) => ({ question: `q${i}`, answer: `a${i}` }));

function renderedRows(): number[] {
  return [...document.querySelectorAll("[data-row]")].map((e) => Number(e.getAttribute("data-row")));
}

describe("testset grid", () => {
  it("renders only the window of 100,000 rows", () => {
    render(<Grid columns={["question", "answer"]} rows={rows} height={VIEW} />);
    const shown = renderedRows();
    expect(shown[0]).toBe(0);
    // The viewport holds VIEW / ROW_HEIGHT rows, plus the overscan.
    expect(shown.length).toBeGreaterThanOrEqual(Math.floor(VIEW / ROW_HEIGHT));
    expect(shown.length).toBeLessThan(60);
    expect(screen.getByText("q0")).toBeInTheDocument();
    expect(screen.queryByText("q99999")).toBeNull();
    // The scroll height is that of every row, so the scrollbar is true.
    const spacer = screen.getByTestId("grid-scroller").children[1] as HTMLElement;
    expect(spacer.style.height).toBe(`${N * ROW_HEIGHT}px`);
  }, 30_000);

  it("moves the window when scrolled, still rendering a window only", () => {
    render(<Grid columns={["question", "answer"]} rows={rows} height={VIEW} />);
    const scroller = screen.getByTestId("grid-scroller");
    scroller.scrollTop = 75_000 * ROW_HEIGHT;
    fireEvent.scroll(scroller);
    const shown = renderedRows();
    expect(shown.length).toBeLessThan(60);
    expect(shown).toContain(75_000);
    expect(shown).not.toContain(0);
    expect(screen.getByText("q75000")).toBeInTheDocument();
    const row = document.querySelector('[data-row="75000"]') as HTMLElement;
    expect(row.style.transform).toBe(`translateY(${75_000 * ROW_HEIGHT}px)`);
  }, 30_000);

  it("edits a cell in place", () => {
    const edits: [number, string, string][] = [];
    render(<Grid columns={["question"]} rows={rows.slice(0, 10)} height={VIEW} editable onEdit={(r, c, v) => edits.push([r, c, v])} />);
    fireEvent.doubleClick(screen.getByText("q3"));
    const input = screen.getByLabelText("edit question of row 4");
    fireEvent.change(input, { target: { value: "new" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(edits).toEqual([[3, "question", "new"]]);
  });
});
