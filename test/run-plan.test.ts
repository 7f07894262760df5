/**
 * `GET /v1/runs/:runId/plan` (what the console draws the DAG from): the plan the run
 * executes, with every dependency by id, defaults filled in, and nothing secret in it.
 */
import { describe, expect, it } from "vitest";
import { api, start, unique, upstreamUrl } from "./helpers";

describe("GET /v1/runs/:runId/plan", () => {
  it("lists every step with its explicit and template dependencies, by id", async () => {
    const { runId } = await start({
      name: "shape",
      input: { city: "Berlin" },
      steps: [
        { id: "a", tool: "pass", params: { value: [1, 2] } },
        { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
        {
          id: "c",
          tool: "pass",
          dependsOn: [0],
          when: "${input.city}",
          forEach: "${steps.b.data}",
        },
        { tool: "pass", trigger: "all_done", dependsOn: ["b", "c"] },
      ],
    });
    const res = await api(`/v1/runs/${runId}/plan`);
    expect(res.status).toBe(200);
    const { revision, plan } = (await res.json()) as any;
    expect(revision).toBe(0);
    expect(plan.name).toBe("shape");
    expect(plan.input).toEqual({ city: "Berlin" });
    expect(plan.config).toMatchObject({ maxParallel: 5, failFast: false, rollback: false });
    expect(plan.config.retry).toEqual({
      maxRetries: 3,
      baseDelayMs: 1000,
      maxDelayMs: 60000,
      jitter: "full",
    });
    expect(plan.steps.map((s: any) => [s.id, s.dependsOn])).toEqual([
      ["a", []],
      ["b", ["a"]],
      ["c", ["a", "b"]],
      ["3", ["b", "c"]],
    ]);
    expect(plan.steps[2]).toMatchObject({ when: "${input.city}", forEach: "${steps.b.data}" });
    expect(plan.steps[3]).toMatchObject({ trigger: "all_done", onFailure: "continue" });
  });

  it("leaves out the webhook secret and header values, keeps the compensation", async () => {
    const key = unique("plan-secret");
    const { runId } = await start({
      webhook: { url: `${upstreamUrl}/script/${key}-hook`, secret: "whsec-do-not-show" },
      steps: [
        {
          id: "h",
          tool: "http",
          params: {
            url: `${upstreamUrl}/script/${key}`,
            headers: { Authorization: "Bearer hand-written-token" },
          },
          compensate: {
            tool: "http",
            params: { url: `${upstreamUrl}/script/${key}-undo`, headers: { "X-Key": "k-123" } },
          },
        },
      ],
    });
    const text = await (await api(`/v1/runs/${runId}/plan`)).text();
    for (const secret of ["whsec-do-not-show", "hand-written-token", "k-123"]) {
      expect(text).not.toContain(secret);
    }
    const { plan } = JSON.parse(text);
    expect(plan.webhook).toEqual({ url: `${upstreamUrl}/script/${key}-hook` });
    expect(plan.steps[0].params.headers).toEqual({ Authorization: "[redacted]" });
    expect(plan.steps[0].compensate).toEqual({
      tool: "http",
      params: { url: `${upstreamUrl}/script/${key}-undo`, headers: { "X-Key": "[redacted]" } },
    });
  });

  it("is a plan document the API accepts again", async () => {
    const { runId } = await start({
      config: { retry: { maxRetries: 1 } },
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "pass", dependsOn: ["a"] },
      ],
    });
    const { plan } = (await (await api(`/v1/runs/${runId}/plan`)).json()) as any;
    const res = await api("/v1/plans/validate", { method: "POST", body: JSON.stringify(plan) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).levels).toEqual([["a"], ["b"]]);
  });

  it("answers 404 for an unknown run", async () => {
    const res = await api(`/v1/runs/run_${"0".repeat(32)}/plan`);
    expect(res.status).toBe(404);
  });
});
