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

  it("answers a route's path with another method 405 and Allow, an unknown path 404", async () => {
    const run = `run_${"0".repeat(32)}`;
    for (const [method, path, allow] of [
      ["PUT", "/v1/runs", "GET, POST, HEAD"],
      ["GET", "/v1/plans/validate", "POST"],
      ["GET", `/v1/runs/${run}/cancel`, "POST"],
      ["PATCH", `/v1/runs/${run}`, "GET, DELETE, HEAD"],
    ] as const) {
      const res = await api(path, { method });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect([method, path, res.status, res.headers.get("allow"), body.error.code]).toEqual([
        method,
        path,
        405,
        allow,
        "method_not_allowed",
      ]);
    }
    const unknown = await api("/v1/nothing", { method: "PUT" });
    expect(unknown.status).toBe(404);
  });
});
