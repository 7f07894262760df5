/**
 * `GET /v1/runs/:id/results` streams the results page by page, so a run whose outputs add up
 * to more than a Durable Object RPC may carry (32 MiB) can still be read (issue 11.4).
 */
import { describe, expect, it } from "vitest";
import { api, execute, unique } from "./helpers";

describe("results larger than one RPC", () => {
  it("140 outputs of 250 kB (35 MB) come back whole, in plan order", async () => {
    const big = "x".repeat(250_000);
    const s = await execute({
      name: unique("large"),
      input: { big },
      steps: Array.from({ length: 140 }, (_, i) => ({
        id: `p${i}`,
        tool: "pass",
        params: { value: "${input.big}" },
      })),
    });
    expect(s.status).toBe("completed");
    const res = await api(`/v1/runs/${s.runId}/results`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const results = (await res.json()) as any[];
    expect(results).toHaveLength(140);
    expect(results.map((r) => r.stepId)).toEqual(Array.from({ length: 140 }, (_, i) => `p${i}`));
    expect(results.every((r) => r.success && r.data === big)).toBe(true);
  });

  it("streams a results page boundary between steps without losing or repeating one", async () => {
    // 40 outputs of 200 kB: more than one 4 MiB page.
    const s = await execute({
      name: unique("pages"),
      input: { v: "y".repeat(200_000) },
      steps: Array.from({ length: 40 }, (_, i) => ({
        id: `q${i}`,
        tool: "pass",
        params: { value: "${input.v}" },
      })),
    });
    const results = (await (await api(`/v1/runs/${s.runId}/results`)).json()) as any[];
    expect(results.map((r) => r.stepId)).toEqual(Array.from({ length: 40 }, (_, i) => `q${i}`));
  });
});
