import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { LiveBadge, PauseNotice } from "./OnlineEvaluation";
import { pauseOf, type Run } from "../../api/evaluations";

afterEach(cleanup);

const pause = { type: "daily_budget_reached", budget: 0.01, spent: 0.02, resumes_at: "2026-03-03T00:00:00Z", message: "daily budget of $0.01 reached; resumes at 00:00 UTC" };
const live = (active: boolean, meta?: Record<string, unknown>): Run => ({ id: "r", status: "running", flags: { is_live: true, is_active: active }, meta });

describe("a live run paused by its daily budget", () => {
  it("reads the pause of a live, active run only", () => {
    expect(pauseOf(live(true, { pause }))).toEqual({ message: pause.message, resumesAt: pause.resumes_at });
    expect(pauseOf(live(true))).toBeUndefined();
    expect(pauseOf(live(false, { pause })), "stopped says more than paused").toBeUndefined();
  });

  it("badges paused, not live", () => {
    render(<LiveBadge run={live(true, { pause })} />);
    expect(screen.getByTestId("live-badge").textContent).toBe("paused (daily budget)");
    cleanup();
    render(<LiveBadge run={live(true)} />);
    expect(screen.getByTestId("live-badge").textContent).toContain("live");
    cleanup();
    render(<LiveBadge run={live(false, { pause })} />);
    expect(screen.getByTestId("live-badge").textContent).toBe("stopped");
  });

  it("says nothing is scored, why, and when it resumes", () => {
    render(<PauseNotice pause={{ message: pause.message, resumesAt: pause.resumes_at }} />);
    const text = screen.getByTestId("pause-notice").textContent ?? "";
    expect(text).toContain("Paused: no trace is being scored");
    expect(text).toContain("daily budget of $0.01 reached; resumes at 00:00 UTC");
    expect(screen.getByTestId("pause-resumes").textContent).toBe(new Date(pause.resumes_at).toLocaleString());
  });
});
