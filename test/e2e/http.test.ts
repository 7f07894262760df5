/**
 * End to end over real HTTP: the Worker built by wrangler, running in Miniflare with real
 * alarms, calling the loopback upstream started in this Node process.
 */
import { describe, expect, it } from "vitest";
import chain from "../../examples/04-three-level-chain.json";
import mixed from "../../examples/05-mixed.json";
import partialFailure from "../../examples/partial-failure.json";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile();

const { post, getJson, waitForEnd } = e2eClient(() => e2e.worker.url);

async function submit(plan: unknown): Promise<string> {
  const res = await post("/v1/runs", plan);
  expect(res.status).toBe(202);
  return res.headers.get("location")!;
}

const ids = (data: unknown) => (data as { id: string }[]).map((d) => d.id);

describe("e2e: the built Worker over HTTP", () => {
  it("serves GET /healthz", async () => {
    const res = await fetch(`${e2e.worker.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it("POST /v1/runs answers 202 with the run's status URL in Location", async () => {
    const res = await post("/v1/runs", chain);
    expect(res.status).toBe(202);
    const body = (await res.json()) as { runId: string; status: string; statusUrl: string };
    expect(body.runId).toEqual(expect.any(String));
    expect(body.status).toBe("pending");
    expect(res.headers.get("location")).toBe(body.statusUrl);
    expect(new URL(body.statusUrl).pathname).toBe(`/v1/runs/${body.runId}`);
  });

  it("runs the three-level chain to completed on its own alarms", async () => {
    const status = await waitForEnd(await submit(chain));
    expect(status.status).toBe("completed");
    expect(status.steps.map((s: { status: string }) => s.status)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    expect(status.progress).toMatchObject({
      completedSteps: 3,
      totalSteps: 3,
      percentage: 100,
      estimatedTimeRemainingMs: 0,
    });
  });

  it("GET /results returns each level's data in plan order", async () => {
    const status = await waitForEnd(await submit(chain));
    const results = await getJson(`/v1/runs/${status.runId}/results`);
    expect(results.map((r: { success: boolean }) => r.success)).toEqual([true, true, true]);
    expect(results.map((r: { data: unknown }) => ids(r.data))).toEqual([
      ["F1"],
      ["S1", "S3"],
      ["C1", "C2"],
    ]);
  });

  it("the upstream receives the resolved template values", async () => {
    const status = await waitForEnd(await submit(chain));
    const calls = e2e.upstream.calls.filter((c) =>
      c.idempotencyKey?.startsWith(`${status.runId}:`),
    );
    expect(calls.map((c) => [c.path, Object.fromEntries(new URLSearchParams(c.query))])).toEqual([
      ["/facilities", { location: "Berlin", limit: "1" }],
      ["/shipments", { facility_id: "F1", limit: "10" }],
      ["/contaminants", { shipment_ids: "S1,S3" }],
    ]);
  });

  it("ends the partial-failure example partial, with the 404 step a client_error", async () => {
    const status = await waitForEnd(await submit(partialFailure));
    expect(status.status).toBe("partial");
    expect(status.steps.map((s: { status: string }) => s.status)).toEqual([
      "succeeded",
      "failed",
      "succeeded",
    ]);
    expect(status.steps[1].error).toMatchObject({ category: "client_error", status: 404 });
  });

  it("POST /v1/plans/validate returns order, levels and critical path of the chain", async () => {
    const res = await post("/v1/plans/validate", chain);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      valid: true,
      order: ["0", "1", "2"],
      levels: [["0"], ["1"], ["2"]],
      criticalPath: ["0", "1", "2"],
    });
  });

  it("POST /v1/plans/validate puts the mixed example's independent steps on one level", async () => {
    const res = await post("/v1/plans/validate", mixed);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { levels: string[][]; criticalPath: string[] };
    expect(body.levels.map((l) => [...l].sort())).toEqual([["0", "1"], ["2"]]);
    expect(body.criticalPath).toEqual(["0", "2"]);
  });

  it("rejects a bad plan with 400 invalid_plan, one issue per problem", async () => {
    const bad = {
      steps: [
        { id: "a", tool: "no_such_tool" },
        { id: "b", tool: "shipments_list", dependsOn: ["nope"] },
        { id: "c", tool: "shipments_list", params: { facility_id: "${steps.ghost.data.*.id}" } },
      ],
    };
    const res = await post("/v1/runs", bad);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    const body = (await res.json()) as {
      error: { code: string; issues: { path: string; message: string }[] };
    };
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues.map((i) => i.path).sort()).toEqual([
      "steps.0.tool",
      "steps.1.dependsOn.0",
      "steps.2.params.facility_id",
    ]);
  });

  it("names an unknown config field in the 400's issue path", async () => {
    const res = await post("/v1/plans/validate", { ...chain, config: { maxParralel: 3 } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; issues: { path: string }[] } };
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues.map((i) => i.path)).toEqual(["config.maxParralel"]);
  });
});
