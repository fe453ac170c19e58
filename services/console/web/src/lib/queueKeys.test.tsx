import { describe, expect, it } from "vitest";
import { useState } from "react";
import { fireEvent, render, screen } from "@testing-library/react";
import { applyPick, keyAction, useQueueKeys } from "./queueKeys";

function Worker({ total }: { total: number }) {
  const [i, setI] = useState(0);
  const [data, setData] = useState<Record<string, unknown>>({});
  const [submitted, setSubmitted] = useState<string[]>([]);
  const schema = { type: "object", properties: { label: { type: "string", enum: ["good", "bad", "unsure"] }, note: { type: "string" } } };
  useQueueKeys({
    next: () => setI((x) => Math.min(x + 1, total - 1)),
    prev: () => setI((x) => Math.max(x - 1, 0)),
    pick: (n) => {
      const d = applyPick(schema, data, n);
      if (d) setData(d);
    },
    submit: () => setSubmitted((s) => [...s, `${i}:${String(data.label)}`]),
  });
  return (
    <div>
      <span data-testid="pos">{i}</span>
      <span data-testid="label">{String(data.label ?? "")}</span>
      <span data-testid="submitted">{submitted.join(",")}</span>
      <textarea aria-label="note" />
    </div>
  );
}

describe("queue keyboard", () => {
  it("j/k move, number keys pick, ctrl+enter submits; plain keys are ignored while typing", () => {
    render(<Worker total={3} />);
    const pos = () => screen.getByTestId("pos").textContent;
    fireEvent.keyDown(document.body, { key: "j" });
    fireEvent.keyDown(document.body, { key: "j" });
    expect(pos()).toBe("2");
    fireEvent.keyDown(document.body, { key: "j" }); // stays on the last
    expect(pos()).toBe("2");
    fireEvent.keyDown(document.body, { key: "k" });
    expect(pos()).toBe("1");
    fireEvent.keyDown(document.body, { key: "2" });
    expect(screen.getByTestId("label").textContent).toBe("bad");
    fireEvent.keyDown(document.body, { key: "9" }); // no 9th option: unchanged
    expect(screen.getByTestId("label").textContent).toBe("bad");

    const note = screen.getByLabelText("note");
    fireEvent.keyDown(note, { key: "j" });
    fireEvent.keyDown(note, { key: "1" });
    expect(pos()).toBe("1");
    expect(screen.getByTestId("label").textContent).toBe("bad");
    fireEvent.keyDown(note, { key: "Enter", ctrlKey: true });
    expect(screen.getByTestId("submitted").textContent).toBe("1:bad");
    fireEvent.keyDown(document.body, { key: "Enter", metaKey: true });
    expect(screen.getByTestId("submitted").textContent).toBe("1:bad,1:bad");
    fireEvent.keyDown(document.body, { key: "Enter" }); // plain enter: nothing
    expect(screen.getByTestId("submitted").textContent).toBe("1:bad,1:bad");
  });

  it("maps keys to actions", () => {
    expect(keyAction({ key: "j" })).toEqual({ type: "next" });
    expect(keyAction({ key: "k" })).toEqual({ type: "prev" });
    expect(keyAction({ key: "7" })).toEqual({ type: "pick", n: 7 });
    expect(keyAction({ key: "j", ctrlKey: true })).toBeNull();
    expect(keyAction({ key: "x" })).toBeNull();
  });

  it("picks values by the first field's type", () => {
    const num = { properties: { score: { type: "number", minimum: 0, maximum: 5 } } };
    expect(applyPick(num, {}, 4)).toEqual({ score: 4 });
    expect(applyPick(num, { score: 1, c: "x" }, 0)).toEqual({ score: 0, c: "x" });
    expect(applyPick(num, {}, 9)).toBeNull();
    const bool = { properties: { success: { type: "boolean" } } };
    expect(applyPick(bool, {}, 1)).toEqual({ success: true });
    expect(applyPick(bool, {}, 0)).toEqual({ success: false });
    expect(applyPick(bool, {}, 2)).toBeNull();
    expect(applyPick({ properties: { comment: { type: "string" } } }, {}, 1)).toBeNull();
    // Keys sorted by the registry: the pick goes to the first pickable field, a required one first.
    expect(applyPick({ properties: { comment: { type: "string" }, rating: { enum: [1, 2, 3] } } }, {}, 3)).toEqual({ rating: 3 });
    expect(applyPick({ required: ["score"], properties: { approved: { type: "boolean" }, score: { type: "integer" } } }, {}, 1)).toEqual({ score: 1 });
    expect(applyPick(undefined, {}, 1)).toBeNull();
  });
});
