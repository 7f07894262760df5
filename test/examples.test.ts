/**
 * The plans in examples/ (the seed's "Real API Execution Examples" plus the failure
 * examples), run as submitted against the loopback upstream's fake domain API.
 */
import { describe, expect, it } from "vitest";
import simple from "../examples/01-simple.json";
import parallel from "../examples/02-parallel.json";
import dependency from "../examples/03-dependency.json";
import chain from "../examples/04-three-level-chain.json";
import criticalPath from "../examples/critical-path.json";
import mixed from "../examples/05-mixed.json";
import emptyResult from "../examples/06-empty-result.json";
import failFast from "../examples/fail-fast.json";
import partialFailure from "../examples/partial-failure.json";
import quota from "../examples/quota.json";
import rateLimited from "../examples/rate-limited.json";
import retry from "../examples/retry.json";
import selfRepairing from "../examples/self-repairing.json";
import { api, events, execute, results, runCalls, upstreamUrl } from "./helpers";
import { domainResponse } from "./upstream/data";

/** What the fake API answers for `path?query`. */
function fake(path: string, query = ""): unknown[] {
  return domainResponse(path, new URLSearchParams(query))!;
}

/** An example whose URLs name the demo upstream (127.0.0.1:8788), on the loopback upstream instead. */
const onLoopback = (plan: unknown): unknown =>
  JSON.parse(JSON.stringify(plan).replaceAll("http://127.0.0.1:8788", upstreamUrl));

const ids = (data: unknown) => (data as { id: string }[]).map((d) => d.id);
const ms = (iso: string) => Date.parse(iso);

/** The query string of the one call the run made to `path`. */
async function queryOf(runId: string, path: string): Promise<Record<string, string>> {
  const calls = await runCalls(runId, path);
  expect(calls).toHaveLength(1);
  return Object.fromEntries(new URLSearchParams(calls[0].query));
}

describe("examples/*.json", () => {
  it.each([
    ["01-simple", simple],
    ["02-parallel", parallel],
    ["03-dependency", dependency],
    ["04-three-level-chain", chain],
    ["05-mixed", mixed],
    ["06-empty-result", emptyResult],
    ["partial-failure", partialFailure],
    ["fail-fast", failFast],
    ["retry", retry],
    ["self-repairing", selfRepairing],
    ["quota", quota],
    ["rate-limited", rateLimited],
    ["critical-path", criticalPath],
  ])("%s passes POST /v1/plans/validate", async (_, plan) => {
    const res = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(plan),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { valid: boolean }).valid).toBe(true);
  });
});

describe("example 1: simple execution", () => {
  it("completes with the shipments the API returns for limit=5", async () => {
    const run = await execute(simple);
    expect(run.status).toBe("completed");
    const [r] = await results(run.runId);
    expect(r).toMatchObject({
      success: true,
      tool: "shipments_list",
      metadata: { attempts: 1, retries: 0 },
    });
    expect(r.data).toEqual(fake("/shipments", "limit=5"));
    expect(ids(r.data)).toEqual(["S1", "S2", "S3", "S4"]);
  });
});

describe("example 2: three independent steps", () => {
  it("returns each endpoint's data in plan order", async () => {
    const run = await execute(parallel);
    expect(run.status).toBe("completed");
    const r = await results(run.runId);
    expect(r.map((x) => x.tool)).toEqual(["shipments_list", "facilities_list", "inspections_list"]);
    expect(r.map((x) => x.data)).toEqual([
      fake("/shipments", "limit=5"),
      fake("/facilities"),
      fake("/inspections", "limit=5"),
    ]);
  });

  it("runs the three steps concurrently: every step started before any ended", async () => {
    const run = await execute(parallel);
    const steps = run.steps as { startedAt: string; endedAt: string }[];
    expect(steps).toHaveLength(3);
    const lastStart = Math.max(...steps.map((s) => ms(s.startedAt)));
    const firstEnd = Math.min(...steps.map((s) => ms(s.endedAt)));
    expect(lastStart).toBeLessThan(firstEnd);
  });
});

describe("example 3: dependency through ${step[0].data.*.id}", () => {
  it("sends shipments_list the Berlin facility ids joined with commas", async () => {
    const run = await execute(dependency);
    expect(run.status).toBe("completed");
    expect(await queryOf(run.runId, "/facilities")).toEqual({ location: "Berlin" });
    expect(await queryOf(run.runId, "/shipments")).toEqual({ facility_id: "F1,F3" });
  });

  it("returns the Berlin facilities, then their shipments", async () => {
    const run = await execute(dependency);
    const [facilities, shipments] = await results(run.runId);
    expect(ids(facilities.data)).toEqual(["F1", "F3"]);
    expect(shipments.data).toEqual(fake("/shipments", "facility_id=F1,F3"));
    expect(ids(shipments.data)).toEqual(["S1", "S3", "S4"]);
  });
});

describe("example 4: three-level chain", () => {
  it("passes each level's ids to the next level's query", async () => {
    const run = await execute(chain);
    expect(run.status).toBe("completed");
    expect(await queryOf(run.runId, "/facilities")).toEqual({ location: "Berlin", limit: "1" });
    expect(await queryOf(run.runId, "/shipments")).toEqual({ facility_id: "F1", limit: "10" });
    expect(await queryOf(run.runId, "/contaminants")).toEqual({ shipment_ids: "S1,S3" });
  });

  it("ends with the contaminants of the first Berlin facility's shipments", async () => {
    const run = await execute(chain);
    const r = await results(run.runId);
    expect(r.map((x) => ids(x.data))).toEqual([["F1"], ["S1", "S3"], ["C1", "C2"]]);
    expect(r[2].data).toEqual(fake("/contaminants", "shipment_ids=S1,S3"));
  });

  it("runs the levels one after another", async () => {
    const run = await execute(chain);
    const [a, b, c] = run.steps as { startedAt: string; endedAt: string }[];
    expect(ms(b!.startedAt)).toBeGreaterThanOrEqual(ms(a!.endedAt));
    expect(ms(c!.startedAt)).toBeGreaterThanOrEqual(ms(b!.endedAt));
  });
});

describe("example 5: mixed parallel and sequential", () => {
  it("returns all facilities, all shipments, and the first facility's contaminants", async () => {
    const run = await execute(mixed);
    expect(run.status).toBe("completed");
    const r = await results(run.runId);
    expect(r[0].data).toEqual(fake("/facilities"));
    expect(r[1].data).toEqual(fake("/shipments"));
    expect(await queryOf(run.runId, "/contaminants")).toEqual({ facility_id: "F1" });
    expect(r[2].data).toEqual(fake("/contaminants", "facility_id=F1"));
    expect(ids(r[2].data)).toEqual(["C1", "C2"]);
  });

  it("starts step 2 only after step 0 ended", async () => {
    const run = await execute(mixed);
    const [s0, , s2] = run.steps as { startedAt: string; endedAt: string }[];
    expect(ms(s2!.startedAt)).toBeGreaterThanOrEqual(ms(s0!.endedAt));
  });

  it("runs steps 0 and 1 concurrently", async () => {
    const run = await execute(mixed);
    const [s0, s1] = run.steps as { startedAt: string; endedAt: string }[];
    expect(Math.max(ms(s0!.startedAt), ms(s1!.startedAt))).toBeLessThan(
      Math.min(ms(s0!.endedAt), ms(s1!.endedAt)),
    );
  });
});

describe("example 6: an empty result feeds the next step (the seed's conditional execution)", () => {
  it("sends an empty facility_id and completes with empty results, not an error", async () => {
    const run = await execute(emptyResult);
    expect(run.status).toBe("completed");
    expect(await queryOf(run.runId, "/shipments")).toEqual({ facility_id: "" });
    expect((await results(run.runId)).map((r) => r.data)).toEqual([[], []]);
  });
});

describe("critical-path example: maxParallel leaves a choice", () => {
  it("starts the head of the four-step chain among the first five, before lone steps listed earlier", async () => {
    const run = await execute(onLoopback(criticalPath));
    expect(run.status).toBe("completed");
    const started = (await events(run.runId))
      .filter((e) => e.type === "step_started")
      .map((e) => e.stepId);
    expect(started.slice(0, 5).sort()).toEqual(
      ["build-1", "lookup-1", "lookup-2", "lookup-3", "lookup-4"].sort(),
    );
  });
});

describe("partial-failure example (failFast: false)", () => {
  it("ends partial", async () => {
    const run = await execute(partialFailure);
    expect(run.status).toBe("partial");
    expect(run.summary).toMatchObject({
      totalSteps: 3,
      successfulSteps: 2,
      failedSteps: 1,
      skippedSteps: 0,
    });
  });

  it("fails the unknown_endpoint step once as a client_error 404", async () => {
    const run = await execute(partialFailure);
    expect(run.steps[1]).toMatchObject({
      tool: "unknown_endpoint",
      status: "failed",
      attempts: 1,
      error: { category: "client_error", status: 404 },
    });
    expect(await runCalls(run.runId, "/no-such-endpoint")).toHaveLength(1);
  });

  it("still runs the steps on either side to success", async () => {
    const run = await execute(partialFailure);
    const r = await results(run.runId);
    expect(r.map((x) => x.success)).toEqual([true, false, true]);
    expect(r[0].data).toEqual(fake("/shipments"));
    expect(r[2].data).toEqual(fake("/facilities"));
  });
});

describe("fail-fast example (failFast: true)", () => {
  it("ends failed", async () => {
    const run = await execute(failFast);
    expect(run.status).toBe("failed");
    expect(run.steps[1]).toMatchObject({
      status: "failed",
      error: { category: "client_error", status: 404 },
    });
  });
});

describe("self-repairing example: verify, then a repair from the demo planner (SPEC 9)", () => {
  // The example's planner is the demo upstream's: here, the loopback upstream's.
  const plan = onLoopback(selfRepairing);

  it("fixes the misspelt city after verification_failed and completes", async () => {
    const run = await execute(plan);
    expect(run.status).toBe("completed");
    const locations = (await runCalls(run.runId, "/facilities")).map((c) =>
      new URLSearchParams(c.query).get("location"),
    );
    expect(locations).toEqual(["Berln", "Berlin"]);
    const [, , report] = await results(run.runId);
    expect(report.data).toEqual({
      facilities: ["Berlin Plant", "Berlin Annex"],
      shipments: ["S1", "S3", "S4"],
    });
    expect(run.replans).toEqual([
      expect.objectContaining({ n: 1, stepId: "facilities", answer: "repaired", newStepIds: [] }),
    ]);
    const plannerCalls = await runCalls(run.runId, "/planner");
    expect(plannerCalls).toHaveLength(1);
    expect(JSON.parse(plannerCalls[0].body)).toMatchObject({
      error: { category: "verification_failed" },
      params: { location: "Berln" },
    });
    const stored = (await (await api(`/v1/runs/${run.runId}/plan`)).json()) as any;
    expect(stored.revision).toBe(1);
    expect(stored.plan.steps[0].params).toEqual({ location: "Berlin" });
  });
});
