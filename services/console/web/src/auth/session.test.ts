import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../api/types";
import { pickProject } from "./session";

const session = { project_id: "p1", projects: [{ id: "p1" }, { id: "p2" }] } as unknown as Session;

describe("pickProject", () => {
  afterEach(() => {
    localStorage.clear();
    window.history.replaceState(null, "", "/");
  });

  it("takes the project a link names (the compatible SDK's links, redirected by the gateway)", () => {
    window.history.replaceState(null, "", "/console/evaluations/r1?project_id=p2");
    expect(pickProject(session)).toBe("p2");
    expect(localStorage.getItem("assay.project_id")).toBe("p2");
  });

  it("ignores a linked project that is not the user's", () => {
    localStorage.setItem("assay.project_id", "p2");
    window.history.replaceState(null, "", "/console/traces/t1?project_id=p9");
    expect(pickProject(session)).toBe("p2");
  });

  it("falls back to the session's default", () => {
    expect(pickProject(session)).toBe("p1");
  });
});
