import { afterEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "./settings";

// The workspace's team arrives in the compatible frontend's shape (a plain
// list of {user, roles}, invitations among them); the members page reads
// the members only, as the other levels list them.
describe("membersApi.list", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("maps a workspace's team to members and leaves out open invitations", async () => {
    const team = [
      {
        user: { id: "u1", email: "ann@example.com", username: "ann", status: "member", created_at: "2026-01-01T00:00:00Z" },
        roles: [{ role_name: "owner", role_description: "", permissions: ["read"] }],
      },
      {
        user: { id: "i1", email: "bob@example.com", username: "bob", status: "pending", created_at: "2026-01-02T00:00:00Z" },
        roles: [{ role_name: "editor", role_description: "", permissions: ["read"] }],
      },
    ];
    const calls: string[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string) => {
        calls.push(url);
        return new Response(JSON.stringify(team), { status: 200, headers: { "Content-Type": "application/json" } });
      }),
    );
    const got = await membersApi.list("workspaces", "ws1");
    expect(calls[0]).toContain("/api/workspaces/ws1/members");
    expect(got).toEqual({
      count: 1,
      members: [
        { id: "u1", user_id: "u1", email: "ann@example.com", username: "ann", name: undefined, role: "owner", created_at: "2026-01-01T00:00:00Z" },
      ],
    });
  });
});
