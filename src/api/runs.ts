/** The run routes of SPEC 6. Each run lives in its own RunObject, addressed by run id. */
import { Hono, type Context } from "hono";
import { settings } from "../env";
import { ConflictError, InvalidPlanError, NotFoundError, RateLimitedError } from "../errors";
import { RUN_ID_PATTERN, idempotentRunId, randomRunId } from "./ids";
import { compileRequest } from "./plans";
import type { ApproveOutcome, ControlOutcome } from "../../durable-objects/run-object";
import { eventsResponse } from "./events";
import { approveBodySchema, resumeBodySchema } from "./schemas";
import type { AppEnv } from "./types";
import { readControlBody } from "./validate-input";

export const runRoutes = new Hono<AppEnv>();

function runStub(c: Context<AppEnv>) {
  const runId = c.req.param("runId") ?? "";
  // Ids we never issue cannot name a run: answer without waking a Durable Object.
  if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundError(`run "${runId.slice(0, 80)}" not found`);
  return { runId, stub: c.env.RUNS.get(c.env.RUNS.idFromName(runId)) };
}

function notFound(runId: string): never {
  throw new NotFoundError(`run "${runId}" not found`);
}

runRoutes.post("/", async (c) => {
  const config = settings(c.env);
  const { plan, warnings } = await compileRequest(c, config);
  const owner = c.get("owner");
  const key = c.req.header("idempotency-key");
  if (key !== undefined && (key.length === 0 || key.length > 255)) {
    throw new InvalidPlanError(
      [{ path: "Idempotency-Key", message: "must be 1 to 255 characters" }],
      "invalid_request",
    );
  }
  const runId = key === undefined ? randomRunId() : await idempotentRunId(owner, key);
  const stub = c.env.RUNS.get(c.env.RUNS.idFromName(runId));
  const statusUrl = new URL(`/v1/runs/${runId}`, c.req.url).toString();
  const answer = (status: string, code: 200 | 202) => {
    c.header("Location", statusUrl);
    return c.json({ runId, status, statusUrl, ...(warnings && { warnings }) }, code);
  };
  // Quota is taken last, for a run about to be created: neither an invalid request nor a
  // retry that finds its Idempotency-Key's run (the client's safe retry) spends it.
  const existing = key === undefined ? null : await stub.existingStatus(owner);
  if (existing !== null) return answer(existing, 200);
  if (config.runsPerMinute > 0) {
    const quota = await c.env.LIMITS.get(c.env.LIMITS.idFromName(owner)).take(config.runsPerMinute);
    if (!quota.ok) {
      throw new RateLimitedError(
        `more than ${config.runsPerMinute} runs created this minute (RUNS_PER_MINUTE)`,
        quota.retryAfterSeconds,
      );
    }
  }
  const outcome = await stub.create(runId, owner, plan, new URL(c.req.url).origin);
  return answer(outcome.status, outcome.created ? 202 : 200);
});

runRoutes.get("/:runId", async (c) => {
  const { runId, stub } = runStub(c);
  return c.json((await stub.status(c.get("owner"))) ?? notFound(runId));
});

runRoutes.get("/:runId/steps/:stepId", async (c) => {
  const { runId, stub } = runStub(c);
  const stepId = c.req.param("stepId");
  const step = await stub.step(c.get("owner"), stepId);
  if (step === null) notFound(runId);
  if (step === undefined) throw new NotFoundError(`run "${runId}" has no step "${stepId}"`);
  return c.json(step);
});

runRoutes.get("/:runId/results", async (c) => {
  const { runId, stub } = runStub(c);
  return c.json((await stub.results(c.get("owner"))) ?? notFound(runId));
});

runRoutes.get("/:runId/events", async (c) => {
  const { runId, stub } = runStub(c);
  return eventsResponse(c, stub, () => notFound(runId));
});

function controlled(runId: string, outcome: ControlOutcome | ApproveOutcome) {
  if (outcome === null) notFound(runId);
  if (!outcome.ok) throw new ConflictError(`run "${runId}": ${outcome.message}`);
  return { runId, status: outcome.status };
}

runRoutes.post("/:runId/cancel", async (c) => {
  const { runId, stub } = runStub(c);
  return c.json(controlled(runId, await stub.cancel(c.get("owner"))));
});

runRoutes.post("/:runId/resume", async (c) => {
  const { runId, stub } = runStub(c);
  const body = await readControlBody(c, resumeBodySchema);
  return c.json(controlled(runId, await stub.resume(c.get("owner"), body.iterations)));
});

runRoutes.post("/:runId/approve", async (c) => {
  const { runId, stub } = runStub(c);
  const body = await readControlBody(c, approveBodySchema);
  const outcome = await stub.approve(c.get("owner"), body);
  if (outcome && !outcome.ok && "invalid" in outcome) {
    const path = outcome.field === undefined ? "body" : `body.${outcome.field}`;
    throw new InvalidPlanError([{ path, message: outcome.message }], "invalid_request");
  }
  return c.json(controlled(runId, outcome));
});

runRoutes.post("/:runId/retry", async (c) => {
  const { runId, stub } = runStub(c);
  return c.json(controlled(runId, await stub.redrive(c.get("owner"))));
});
