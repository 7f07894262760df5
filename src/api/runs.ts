/** The run routes of SPEC 6. Each run lives in its own RunObject, addressed by run id. */
import { Hono, type Context } from "hono";
import { stream } from "hono/streaming";
import { takeRunQuota } from "./run-quota";
import { runObject } from "./run-stub";
import { settings } from "../env";
import { ConflictError, InvalidPlanError, NotFoundError } from "../errors";
import { RUN_ID_PATTERN, randomRunId } from "../ids";
import { noteGeneration, resolveIdempotencyKey, type KeyTarget } from "./idempotency";
import { compileRequest } from "./plans";
import { readRepairAnswer } from "../engine/replan";
import type {
  ApproveOutcome,
  ControlOutcome,
  ReplanOutcome,
} from "../../durable-objects/run-object";
import { readJson } from "./body";
import { eventsResponse } from "./events";
import { listRuns } from "./listing";
import { approveBodySchema, resumeBodySchema, runQuerySchema, stepsQuerySchema } from "./schemas";
import type { AppEnv } from "./types";
import { NOTHING, parseQuery, readControlBody, takesNoQuery } from "./validate-input";

export const runRoutes = new Hono<AppEnv>();

function runStub(c: Context<AppEnv>) {
  const runId = c.req.param("runId") ?? "";
  // Ids we never issue cannot name a run: answer without waking a Durable Object.
  if (!RUN_ID_PATTERN.test(runId)) throw new NotFoundError(`run "${runId.slice(0, 80)}" not found`);
  return { runId, stub: runObject(c.env, runId) };
}

function notFound(runId: string): never {
  throw new NotFoundError(`run "${runId}" not found`);
}

runRoutes.get("/", listRuns);

runRoutes.post("/", async (c) => {
  takesNoQuery(c);
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
  const answer = (runId: string, status: string, code: 200 | 202) => {
    const statusUrl = new URL(`/v1/runs/${runId}`, c.req.url).toString();
    c.header("Location", statusUrl);
    return c.json({ runId, status, statusUrl, ...(warnings && { warnings }) }, code);
  };
  let target: KeyTarget =
    key === undefined
      ? { runId: randomRunId(), generation: 0, status: null }
      : await resolveIdempotencyKey(c.env, owner, key);
  // Quota is taken last, for a run about to be created: neither an invalid request nor a
  // retry that finds its Idempotency-Key's run (the client's safe retry) spends it.
  if (target.status !== null) return answer(target.runId, target.status, 200);
  if (config.runsPerMinute > 0) await takeRunQuota(c, owner, config.runsPerMinute);
  for (;;) {
    const stub = runObject(c.env, target.runId);
    const outcome = await stub.create(target.runId, owner, plan, new URL(c.req.url).origin);
    if (!("deleted" in outcome)) {
      if (outcome.created && key !== undefined && target.generation > 0)
        await noteGeneration(c.env, owner, key, target.generation);
      return answer(target.runId, outcome.status, outcome.created ? 202 : 200);
    }
    // The key's run was created and deleted since the lookup: its next generation is due.
    if (key === undefined) throw new Error(`a fresh run id names a deleted run: ${target.runId}`);
    target = await resolveIdempotencyKey(c.env, owner, key, target.generation + 1);
    if (target.status !== null) return answer(target.runId, target.status, 200);
  }
});

runRoutes.get("/:runId", async (c) => {
  const { runId, stub } = runStub(c);
  const query = parseQuery(c, runQuerySchema);
  const answer =
    (await stub.status(c.get("owner"), {
      view: query.view,
      ifNoneMatch: c.req.header("if-none-match"),
      ...(query.wait !== undefined && { waitMs: query.wait }),
    })) ?? notFound(runId);
  c.header("ETag", answer.etag);
  c.header("Cache-Control", "no-cache");
  if (answer.notModified) return c.body(null, 304);
  // The run's Durable Object answers the document as JSON text: sent as it is.
  return c.body(answer.json, 200, { "content-type": "application/json" });
});

runRoutes.get("/:runId/steps", async (c) => {
  const { runId, stub } = runStub(c);
  const query = parseQuery(c, stepsQuerySchema);
  return c.json((await stub.steps(c.get("owner"), query)) ?? notFound(runId));
});

runRoutes.get("/:runId/steps/:stepId", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  const stepId = c.req.param("stepId");
  const step = await stub.step(c.get("owner"), stepId);
  if (step === null) notFound(runId);
  if (step === undefined) throw new NotFoundError(`run "${runId}" has no step "${stepId}"`);
  return c.json(step);
});

runRoutes.get("/:runId/plan", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  return c.json((await stub.plan(c.get("owner"))) ?? notFound(runId));
});

/**
 * The results, streamed as one JSON array page by page: every RPC stays far under a Durable
 * Object's 32 MiB limit, however large the run's outputs add up to.
 */
runRoutes.get("/:runId/results", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  const owner = c.get("owner");
  const first = (await stub.results(owner)) ?? notFound(runId);
  c.header("content-type", "application/json");
  return stream(c, async (out) => {
    await out.write("[");
    let page: typeof first | null = first;
    for (let n = 0; page; n++) {
      if (n > 0 && page.json !== "") await out.write(",");
      await out.write(page.json);
      page = page.next === null ? null : await stub.results(owner, page.next);
    }
    await out.write("]");
  });
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
  takesNoQuery(c);
  await readControlBody(c, NOTHING);
  return c.json(controlled(runId, await stub.cancel(c.get("owner"))));
});

runRoutes.post("/:runId/resume", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  const body = await readControlBody(c, resumeBodySchema);
  return c.json(controlled(runId, await stub.resume(c.get("owner"), body.iterations)));
});

runRoutes.post("/:runId/approve", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
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
  takesNoQuery(c);
  await readControlBody(c, NOTHING);
  return c.json(controlled(runId, await stub.redrive(c.get("owner"))));
});

/**
 * A person's answer to a step's repair (SPEC 9.2, `replan.mode` human): `{ steps }` or
 * `{ giveUp: true, reason }`, read like a plan (MAX_PLAN_BYTES, MAX_JSON_DEPTH). A repair
 * that does not validate is a 400 whose paths point into the body (`steps.0.tool`) or into the
 * run's plan (`plan.steps.3...`); the step keeps waiting.
 */
runRoutes.post("/:runId/replan", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  const config = settings(c.env);
  const body = await readJson(c, {
    maxBytes: config.maxPlanBytes,
    what: "repair",
    maxDepth: config.maxJsonDepth,
  });
  // A body that is no repair is a 400 whatever the run's state, as for every control.
  const read = readRepairAnswer(body);
  if (!read.ok) throw new InvalidPlanError(read.issues, "invalid_plan");
  const outcome = await stub.replan(c.get("owner"), read.answer);
  if (invalidRepair(outcome)) throw new InvalidPlanError(outcome.issues, outcome.code);
  return c.json(controlled(runId, outcome));
});

function invalidRepair(
  outcome: ReplanOutcome,
): outcome is Extract<ReplanOutcome, { invalid: true }> {
  return outcome !== null && !outcome.ok && "invalid" in outcome;
}

/** SPEC 8.3: a final run is deleted now (204); 409 while it is not final; 404 when unknown. */
runRoutes.delete("/:runId", async (c) => {
  const { runId, stub } = runStub(c);
  takesNoQuery(c);
  await readControlBody(c, NOTHING);
  controlled(runId, await stub.deleteRun(c.get("owner")));
  return c.body(null, 204);
});
