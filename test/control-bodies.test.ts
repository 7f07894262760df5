/**
 * Control and callback bodies (SPEC 6): a field that does not apply is a 400 naming it, not
 * silently ignored; a body past its limit is a 413 naming that limit.
 */
import { describe, expect, it } from "vitest";
import { api, byId, drive, post, started, unique } from "./helpers";

/** 64 KiB and one byte of valid JSON: past the control-body limit, far below MAX_PLAN_BYTES. */
const oversized = JSON.stringify({ comment: "x".repeat(64 * 1024) });

describe("POST /approve", () => {
  it("rejects skipSteps when answering an approval step (400 naming body.skipSteps) and leaves the step waiting", async () => {
    const runId = await started({
      name: unique("approve-skip"),
      steps: [
        { id: "gate", tool: "approval" },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["gate"] },
      ],
    });
    expect((await drive(runId)).status).toBe("waiting");
    const { res, body } = await post(`/v1/runs/${runId}/approve`, {
      approved: true,
      stepId: "gate",
      skipSteps: ["after"],
    });
    expect(res.status).toBe(400);
    expect(body.error.issues).toEqual([
      { path: "body.skipSteps", message: expect.stringMatching(/risk gate/) },
    ]);
    const s = await drive(runId);
    expect(byId(s).gate!.status).toBe("waiting");
    expect(byId(s).after!.status).toBe("pending");
  });

  it("an unknown stepId is a 400 naming body.stepId", async () => {
    const runId = await started({
      name: unique("approve-unknown"),
      steps: [{ id: "gate", tool: "approval" }],
    });
    expect((await drive(runId)).status).toBe("waiting");
    const { res, body } = await post(`/v1/runs/${runId}/approve`, {
      approved: true,
      stepId: "nope",
    });
    expect(res.status).toBe(400);
    expect(body.error.issues).toEqual([{ path: "body.stepId", message: 'unknown step "nope"' }]);
  });
});

describe("malformed control bodies", () => {
  it.each(["approve", "resume", "cancel", "retry"])(
    "POST /%s with malformed JSON is a 400 invalid_request at body",
    async (route) => {
      const runId = await started({
        name: unique("bad-json"),
        steps: [{ id: "gate", tool: "approval" }],
      });
      const res = await api(`/v1/runs/${runId}/${route}`, { method: "POST", body: "notjson" });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as any;
      expect(error.code).toBe("invalid_request");
      expect(error.issues).toEqual([
        { path: "body", message: expect.stringMatching(/malformed JSON/) },
      ]);
    },
  );
});

describe("controls that take nothing", () => {
  it("cancel and retry refuse a field (400 naming it); no body or {} is fine", async () => {
    const runId = await started({
      name: unique("nothing"),
      steps: [{ id: "gate", tool: "approval" }],
    });
    for (const route of ["cancel", "retry"]) {
      const { res, body } = await post(`/v1/runs/${runId}/${route}`, { force: true });
      expect(res.status).toBe(400);
      expect(body.error.issues).toEqual([{ path: "body.force", message: expect.any(String) }]);
    }
    expect((await post(`/v1/runs/${runId}/cancel`, {})).res.status).toBe(200);
  });

  it("cancel and retry refuse a query parameter (400 naming it) and change nothing", async () => {
    const runId = await started({
      name: unique("dry-q"),
      steps: [{ id: "gate", tool: "approval" }],
    });
    for (const route of ["cancel", "retry"]) {
      const res = await api(`/v1/runs/${runId}/${route}?dryRun=1`, { method: "POST" });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.issues[0].path).toBe("query.dryRun");
    }
    expect(((await (await api(`/v1/runs/${runId}`)).json()) as any).status).toBe("pending");
  });

  it("every route that takes no query parameter refuses one (400 naming it)", async () => {
    const runId = await started({
      name: unique("no-q"),
      steps: [{ id: "gate", tool: "approval" }],
    });
    const plan = JSON.stringify({ steps: [{ id: "a", tool: "pass" }] });
    const json = { "content-type": "application/json" };
    const routes: [string, string, string?][] = [
      ["POST", "/v1/runs?x=1", plan],
      ["POST", "/v1/plans/validate?x=1", plan],
      ["GET", `/v1/runs/${runId}/steps/gate?x=1`],
      ["GET", `/v1/runs/${runId}/plan?x=1`],
      ["GET", `/v1/runs/${runId}/results?x=1`],
      ["POST", `/v1/runs/${runId}/resume?x=1`, "{}"],
      ["POST", `/v1/runs/${runId}/approve?x=1`, JSON.stringify({ approved: true })],
      ["POST", `/v1/runs/${runId}/replan?x=1`, JSON.stringify({ giveUp: true })],
      ["POST", `/v1/callbacks/cb_${"0".repeat(32)}_${"0".repeat(64)}?x=1`, "{}"],
    ];
    for (const [method, path, body] of routes) {
      const res = await api(path, { method, ...(body !== undefined && { headers: json, body }) });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(((await res.json()) as any).error.issues[0].path, path).toBe("query.x");
    }
    expect(((await (await api(`/v1/runs/${runId}`)).json()) as any).status).toBe("pending");
  });

  it("DELETE refuses a query parameter (400 naming it) and deletes nothing", async () => {
    const runId = await started({ name: unique("dry"), steps: [{ id: "a", tool: "pass" }] });
    await drive(runId);
    const res = await api(`/v1/runs/${runId}?dryRun=1`, { method: "DELETE" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.issues[0].path).toBe("query.dryRun");
    expect((await api(`/v1/runs/${runId}`)).status).toBe(200);
  });

  it("DELETE refuses a body field, or a body that is not JSON (400), and deletes nothing; no body or {} deletes", async () => {
    const runId = await started({ name: unique("dry-body"), steps: [{ id: "a", tool: "pass" }] });
    await drive(runId);
    const del = (body: string) =>
      api(`/v1/runs/${runId}`, {
        method: "DELETE",
        headers: { "content-type": "application/json" },
        body,
      });
    const res = await del(JSON.stringify({ dryRun: true }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.issues[0].path).toBe("body.dryRun");
    expect((await del("not json")).status).toBe(400);
    expect((await api(`/v1/runs/${runId}`)).status).toBe(200);
    expect((await del("{}")).status).toBe(204);
    expect((await api(`/v1/runs/${runId}`)).status).toBe(404);
  });
});

describe("body limits", () => {
  it("a control body past its limit is a 413 naming the control-body limit, not MAX_PLAN_BYTES", async () => {
    const runId = await started({
      name: unique("big-body"),
      steps: [{ id: "gate", tool: "approval" }],
    });
    const res = await api(`/v1/runs/${runId}/approve`, { method: "POST", body: oversized });
    expect(res.status).toBe(413);
    const { message } = ((await res.json()) as any).error;
    expect(message).toMatch(/64 KiB limit of control and callback bodies/);
    expect(message).not.toMatch(/MAX_PLAN_BYTES/);
  });

  it("a callback body past its limit is a 413 naming the control-body limit, not MAX_PLAN_BYTES", async () => {
    const token = `cb_${"0".repeat(32)}_${"0".repeat(64)}`;
    const res = await api(`/v1/callbacks/${token}`, { method: "POST", body: oversized });
    expect(res.status).toBe(413);
    const { message } = ((await res.json()) as any).error;
    expect(message).toMatch(/64 KiB limit of control and callback bodies/);
    expect(message).not.toMatch(/MAX_PLAN_BYTES/);
  });
});
