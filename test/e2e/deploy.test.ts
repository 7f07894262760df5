/**
 * examples/deploy.json end to end over real HTTP: the Worker built by wrangler, running in
 * Miniflare with real alarms, and the loopback upstream's demo operations (demo-ops.ts).
 * The risk gate, a callback from an external job through POST /v1/callbacks/:token, a
 * forEach fan-out over the targets, an approval step, and rollback on failure.
 */
import { describe, expect, it } from "vitest";
import deployPlan from "../../examples/deploy.json";
import type { LoggedCall } from "../upstream/server.ts";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile();

const { post, getJson, waitFor: waitForStatusOf } = e2eClient(() => e2e.worker.url);
const ARTIFACT = "checkout-2.4.1.tar.gz";
const TARGETS = ["eu-west", "us-east", "ap-south"];

/** examples/deploy.json pointed at this test's upstream, with other targets if given. */
function plan(targets?: string[]): typeof deployPlan {
  const p = JSON.parse(
    JSON.stringify(deployPlan).replaceAll("http://127.0.0.1:8788", e2e.upstream.url),
  ) as typeof deployPlan;
  if (targets) p.input.targets = targets;
  return p;
}

/** Submits a plan; returns its run id and the 202's body. */
async function submit(p: unknown): Promise<{ runId: string; status: string; statusUrl: string }> {
  const res = await post("/v1/runs", p);
  expect(res.status).toBe(202);
  return (await res.json()) as { runId: string; status: string; statusUrl: string };
}

/** Polls run `runId` until `done(status)` holds (see e2eClient's waitFor). */
const waitFor = (runId: string, what: string, done: (s: any) => boolean, afterEnd = false) =>
  waitForStatusOf(`/v1/runs/${runId}`, what, done, afterEnd);

const waitForStatus = (runId: string, status: string) =>
  waitFor(runId, status, (s) => s.status === status);

/** Waits until the approval step `stepId` is what the run waits for. */
const waitForApprovalStep = (runId: string, stepId: string) =>
  waitFor(runId, `a pending approval of ${stepId}`, (s) =>
    (s.pendingApproval ?? []).some(
      (p: { gate: string; stepIds: string[] }) => p.gate === "step" && p.stepIds.includes(stepId),
    ),
  );

const waitForRollback = (runId: string) =>
  waitFor(runId, "the rollback's end", (s) => s.rollback && s.rollback.state !== "running", true);

const step = (status: any, id: string) => status.steps.find((s: { id: string }) => s.id === id);
const callsOf = (runId: string, prefix: string): LoggedCall[] =>
  e2e.upstream.calls.filter(
    (c) => c.idempotencyKey?.startsWith(`${runId}:`) && c.path.startsWith(prefix),
  );
const body = (c: LoggedCall) => JSON.parse(c.body) as any;

async function events(
  runId: string,
): Promise<{ seq: number; type: string; stepId?: string; data?: any }[]> {
  return (await getJson(`/v1/runs/${runId}/events?limit=1000`)).events;
}

/** Submits the plan and answers the risk gate: the run then starts. */
async function approvedRun(p: unknown): Promise<string> {
  const { runId, status } = await submit(p);
  expect(status).toBe("waiting");
  const res = await post(`/v1/runs/${runId}/approve`, { approved: true });
  expect(res.status).toBe(200);
  return runId;
}

describe("e2e: examples/deploy.json", () => {
  it("waits at the risk gate, builds by callback, deploys two at a time, waits for release, completes", async () => {
    const { runId, status: created, statusUrl } = await submit(plan());
    expect(created).toBe("waiting");

    // The risk gate: nothing has started, `deploy` (risk high) needs an answer.
    const gated = await getJson(statusUrl);
    expect(gated.status).toBe("waiting");
    expect(gated.pendingApproval).toEqual([{ gate: "risk", stepIds: ["deploy"] }]);
    expect(gated.steps.map((s: { status: string }) => s.status)).toEqual([
      "pending",
      "pending",
      "pending",
      "pending",
    ]);
    expect(callsOf(runId, "/")).toEqual([]);

    const open = await post(`/v1/runs/${runId}/approve`, { approved: true });
    expect(open.status).toBe(200);
    expect(await open.json()).toEqual({ runId, status: "pending" });

    // build's job calls back; deploy fans out; the run then waits for `release`.
    const atRelease = await waitForApprovalStep(runId, "release");
    expect(atRelease.status).toBe("waiting");
    expect(atRelease.pendingApproval).toEqual([{ gate: "step", stepIds: ["release"] }]);
    expect(step(atRelease, "build").status).toBe("succeeded");
    expect(step(atRelease, "deploy")).toMatchObject({
      status: "succeeded",
      items: { total: 3, succeeded: 3, failed: 0, cancelled: 0, running: 0 },
    });
    expect(step(atRelease, "release")).toMatchObject({ status: "waiting", waitingFor: "approval" });
    expect(step(atRelease, "shift-traffic").status).toBe("pending");

    // The job got the callback tool's body, with a callback URL on this Worker...
    const jobs = callsOf(runId, "/jobs");
    expect(jobs).toHaveLength(1);
    const job = body(jobs[0]!);
    expect(job).toMatchObject({
      runId,
      stepId: "build",
      input: { service: "checkout", version: "2.4.1" },
    });
    expect(job.callbackUrl).toBe(`${e2e.worker.url}/v1/callbacks/${job.token}`);
    // ...and called it (the step's data is the job's output, which only the callback carries).
    const build = await getJson(`/v1/runs/${runId}/steps/build`);
    expect(build.data).toEqual({
      jobId: expect.stringMatching(/^job-/),
      status: "succeeded",
      artifact: ARTIFACT,
    });
    const ev = await events(runId);
    const seqOf = (type: string, stepId: string) =>
      ev.find((e) => e.type === type && e.stepId === stepId)?.seq ?? -1;
    expect(seqOf("step_waiting", "build")).toBeGreaterThan(0);
    expect(seqOf("step_succeeded", "build")).toBeGreaterThan(seqOf("step_waiting", "build"));
    // The token was single-use.
    expect((await post(job.callbackUrl, { output: { again: true } })).status).toBe(409);

    // deploy: one call per target with build's artifact, at most (and here exactly) 2 at once.
    const deploys = callsOf(runId, "/deploy/");
    expect(deploys.map((c) => c.path)).toEqual(TARGETS.map((t) => `/deploy/${t}`));
    expect(deploys.map(body)).toEqual(TARGETS.map((target) => ({ artifact: ARTIFACT, target })));
    expect(deploys.map((c) => c.idempotencyKey)).toEqual(
      TARGETS.map((_, i) => `${runId}:deploy:${i}`),
    );
    const deployed = (await getJson(`/v1/runs/${runId}/steps/deploy`)).data as {
      target: string;
      concurrent: number;
    }[];
    expect(deployed.map((d) => d.target)).toEqual(TARGETS);
    expect(Math.max(...deployed.map((d) => d.concurrent))).toBe(2);
    expect(callsOf(runId, "/echo")).toEqual([]);

    const release = await post(`/v1/runs/${runId}/approve`, {
      approved: true,
      stepId: "release",
      comment: "alice: go",
    });
    expect(release.status).toBe(200);

    const final = await waitForStatus(runId, "completed");
    expect(final.steps.map((s: { status: string }) => s.status)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    expect(final.pendingApproval).toBeUndefined();
    expect(final.rollback).toBeUndefined();
    const results = await getJson(`/v1/runs/${runId}/results`);
    expect(results.map((r: { success: boolean }) => r.success)).toEqual([true, true, true, true]);
    expect(results[2].data).toEqual({ approved: true, comment: "alice: go" });
    expect(results[3].data.body).toEqual({
      action: "shift-traffic",
      version: "2.4.1",
      approvedBy: "alice: go",
    });
    expect(callsOf(runId, "/undeploy")).toEqual([]);
  });

  it("a failing target fails deploy and the run; rollback undeploys the targets that were reached", async () => {
    const targets = ["eu-west", "us-east", "ap-south-fail"];
    const runId = await approvedRun(plan(targets));

    const failed = await waitForStatus(runId, "failed");
    expect(step(failed, "build").status).toBe("succeeded");
    const deploy = step(failed, "deploy");
    expect(deploy).toMatchObject({
      status: "failed",
      items: { total: 3, succeeded: 2, failed: 1, cancelled: 0, running: 0 },
    });
    expect(deploy.error.category).toBe("server_error");
    // the failing target was retried once (retry.maxRetries: 1), the others ran once
    expect(
      callsOf(runId, "/deploy/")
        .map((c) => c.path)
        .sort(),
    ).toEqual([
      "/deploy/ap-south-fail",
      "/deploy/ap-south-fail",
      "/deploy/eu-west",
      "/deploy/us-east",
    ]);
    expect(["skipped", "cancelled"]).toContain(step(failed, "release").status);
    expect(["skipped", "cancelled"]).toContain(step(failed, "shift-traffic").status);
    expect(callsOf(runId, "/echo")).toEqual([]);

    const rolledBack = await waitForRollback(runId);
    expect(rolledBack.status).toBe("failed");
    expect(rolledBack.rollback).toMatchObject({
      state: "completed",
      steps: [{ stepId: "deploy", tool: "http", status: "succeeded", attempts: 1 }],
    });
    const undo = callsOf(runId, "/undeploy");
    expect(undo).toHaveLength(1);
    expect(undo[0]!.idempotencyKey).toBe(`${runId}:deploy:compensate`);
    expect(body(undo[0]!)).toEqual({ artifact: ARTIFACT, targets });

    const ev = await events(runId);
    const finished = ev.find((e) => e.type === "run_finished")!;
    expect(finished.data).toEqual({ status: "failed" });
    const compensation = ev.filter((e) => e.type.startsWith("compensation_"));
    expect(compensation.map((e) => [e.type, e.stepId])).toEqual([
      ["compensation_started", "deploy"],
      ["compensation_finished", "deploy"],
    ]);
    expect(compensation[1]!.data).toEqual({ status: "succeeded" });
    expect(compensation[0]!.seq).toBeGreaterThan(finished.seq);
  });

  it("denying `release` fails the run (approval_denied) and rollback undeploys", async () => {
    const runId = await approvedRun(plan());
    await waitForApprovalStep(runId, "release");
    const deny = await post(`/v1/runs/${runId}/approve`, {
      approved: false,
      stepId: "release",
      comment: "not today",
    });
    expect(deny.status).toBe(200);

    const failed = await waitForStatus(runId, "failed");
    expect(step(failed, "build").status).toBe("succeeded");
    expect(step(failed, "deploy").status).toBe("succeeded");
    expect(step(failed, "release")).toMatchObject({
      status: "failed",
      error: { category: "approval_denied", message: "approval denied: not today" },
    });
    expect(step(failed, "shift-traffic")).toMatchObject({
      status: "skipped",
      reason: "dependency_failed",
    });
    expect(callsOf(runId, "/echo")).toEqual([]);

    const rolledBack = await waitForRollback(runId);
    expect(rolledBack.rollback).toMatchObject({
      state: "completed",
      steps: [{ stepId: "deploy", status: "succeeded" }],
    });
    const undo = callsOf(runId, "/undeploy");
    expect(undo).toHaveLength(1);
    expect(body(undo[0]!)).toEqual({ artifact: ARTIFACT, targets: TARGETS });
    expect(
      (await events(runId)).some((e) => e.type === "approval_denied" && e.stepId === "release"),
    ).toBe(true);
  });

  it("denying the risk gate cancels the run before anything starts", async () => {
    const { runId } = await submit(plan());
    const deny = await post(`/v1/runs/${runId}/approve`, {
      approved: false,
      comment: "change freeze",
    });
    expect(deny.status).toBe(200);
    expect(await deny.json()).toEqual({ runId, status: "cancelled" });
    const status = await getJson(`/v1/runs/${runId}`);
    expect(status.status).toBe("cancelled");
    expect(status.rollback).toBeUndefined();
    expect(callsOf(runId, "/")).toEqual([]);
  });
});
