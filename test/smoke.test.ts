import { describe, expect, it } from "vitest";
import { api, execute, submit } from "./helpers";

describe("smoke", () => {
  it("answers /healthz", async () => {
    const res = await api("/healthz");
    expect(res.status).toBe(200);
  });

  it("runs a pass step", async () => {
    const s = await execute({ steps: [{ id: "a", tool: "pass", params: { value: 42 } }] });
    expect(s.status).toBe("completed");
  });

  it("rejects malformed JSON", async () => {
    const { res, body } = await submit("{nope");
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("invalid_plan");
  });
});
