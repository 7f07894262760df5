/**
 * zod schemas of the v1 routes' inputs and outputs (SPEC 6). Routes validate with them, the
 * OpenAPI document (src/api/openapi.ts) is generated from them and the typed client
 * (src/client/) derives its types from them, so the three cannot drift.
 */
import { z } from "zod";
import { HARD_MAX_STEPS, modeSchema, planSchema, tagsSchema } from "../../engine/plan-schema.ts";
import { repairAnswerSchema } from "../../engine/plan-schema.ts";
import { RUN_STATUSES } from "../../engine/records.ts";
import { intParam } from "./query.ts";

export { RUN_STATUSES };
export const runStatusValueSchema = z.enum(RUN_STATUSES);

/** Step statuses (SPEC 5.8). */
export const STEP_STATUSES = [
  "pending",
  "running",
  "retrying",
  "waiting",
  "succeeded",
  "failed",
  "skipped",
  "cancelled",
] as const;
export const stepStatusValueSchema = z.enum(STEP_STATUSES);

export const resumeBodySchema = z.strictObject({
  iterations: z
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe("more iterations (default: the plan's bound)"),
});

export const approveBodySchema = z.strictObject({
  approved: z.boolean(),
  skipSteps: z
    .array(z.string())
    .max(10_000)
    .optional()
    .describe("risk gate, with approved: true: steps to skip (skipped_by_user)"),
  stepId: z
    .string()
    .optional()
    .describe("the approval step to answer (default: the only one waiting)"),
  comment: z.string().max(2000).optional(),
});

/** `POST /v1/runs/:runId/replan` (SPEC 9.2): a repair, or giving up; the planner answers the same. */
export const replanBodySchema = repairAnswerSchema;

export const callbackBodySchema = z.union([
  z.strictObject({ output: z.unknown() }).describe("the step succeeds with data = output"),
  z
    .strictObject({ error: z.strictObject({ message: z.string().max(10_000) }) })
    .describe("the step fails (callback_failed)"),
]);

export const eventsQuerySchema = z.strictObject({
  after: intParam(0, Number.MAX_SAFE_INTEGER, 0).describe(
    "return events with seq greater than this",
  ),
  limit: intParam(1, 1000, 100),
});

/*
 * Response schemas. Strict (an undeclared field is an error) because a test parses real
 * responses with them (test/openapi.test.ts): a field added to a view but not here fails it,
 * so the OpenAPI document (additionalProperties: false) cannot fall behind the API.
 */

/** A problem, or a warning, located by a dotted path into the request (`steps.2.dependsOn.0`). */
export const issueSchema = z.strictObject({ path: z.string(), message: z.string() });

export const errorSchema = z.strictObject({
  error: z.strictObject({
    code: z
      .string()
      .describe(
        "invalid_plan, egress_denied, invalid_request, payload_too_large, unauthorized, not_found, method_not_allowed, conflict, rate_limited, auth_not_configured, misconfigured, internal",
      ),
    message: z.string(),
    issues: z.array(issueSchema).optional(),
  }),
});

/** Unknown step fields that were ignored (SPEC 2.1 keeps accepting an agent's extra notes). */
const warningsSchema = z
  .array(issueSchema)
  .optional()
  .describe("unknown step fields that were ignored, by path; absent when there are none");

export const runCreatedSchema = z.strictObject({
  runId: z.string().regex(/^run_[0-9a-f]{32}$/),
  status: runStatusValueSchema,
  statusUrl: z.url(),
  warnings: warningsSchema,
});

export const validateResultSchema = z.strictObject({
  valid: z.literal(true),
  order: z.array(z.string()).describe("step ids in a topological order"),
  levels: z.array(z.array(z.string())).describe("step ids by dependency depth"),
  criticalPath: z.array(z.string()).describe("step ids of the longest chain, by step count"),
  warnings: warningsSchema,
});

export const controlResultSchema = z.strictObject({
  runId: z.string(),
  status: runStatusValueSchema,
});

export const callbackResultSchema = z.strictObject({ ok: z.literal(true) });

export const healthSchema = z.strictObject({ ok: z.literal(true) });

const stepErrorSchema = z.strictObject({
  category: z.string(),
  message: z.string(),
  status: z.int().optional(),
});

const itemCountsSchema = z
  .strictObject({
    total: z.int(),
    succeeded: z.int(),
    failed: z.int(),
    cancelled: z.int().describe("cut off or never started when the run stopped"),
    running: z.int(),
  })
  .describe("a forEach step's items");

export const stepStatusSchema = z.strictObject({
  id: z.string(),
  index: z.int(),
  tool: z.string(),
  status: stepStatusValueSchema,
  reason: z.string().optional(),
  attempts: z.int(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.int().nullable(),
  nextAttemptAt: z.string().optional(),
  waitingFor: z.enum(["approval", "callback", "timer", "replan", "quota"]).optional(),
  items: itemCountsSchema.optional(),
  error: stepErrorSchema.optional(),
});

export const stepResultSchema = z.strictObject({
  stepId: z.string(),
  success: z.boolean(),
  status: stepStatusValueSchema.describe(
    "the step's status: `success` is false for a step that failed and for one that never ran (skipped, cancelled, not yet run)",
  ),
  reason: z.string().optional().describe("why a skipped step was skipped"),
  tool: z.string(),
  data: z.unknown(),
  error: stepErrorSchema.optional(),
  metadata: z.strictObject({
    executionTime: z
      .int()
      .nullable()
      .describe(
        "ms of the last attempt of a step that succeeded or failed; null when it never ran",
      ),
    timestamp: z.string().nullable(),
    attempts: z.int(),
    retries: z.int(),
    status: z.int().optional(),
  }),
});

const attemptSchema = z.strictObject({
  item: z.int().optional().describe("the forEach item the attempt served"),
  attempt: z.int(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  category: z.string().optional(),
  status: z.int().optional(),
  message: z.string().optional(),
});

/** `GET /v1/runs/:runId/steps/:stepId`: the step's status entry, its result (without stepId) and attempt log. */
export const stepDetailSchema = stepStatusSchema
  .extend(stepResultSchema.omit({ stepId: true }).shape)
  .extend({ attemptLog: z.array(attemptSchema) });

const rollbackSchema = z.strictObject({
  state: z.enum(["running", "completed", "failed"]),
  steps: z.array(
    z.strictObject({
      stepId: z.string(),
      tool: z.string(),
      status: z.enum(["pending", "running", "retrying", "succeeded", "failed"]),
      attempts: z.int(),
      startedAt: z.string().nullable(),
      endedAt: z.string().nullable(),
      error: stepErrorSchema.optional(),
    }),
  ),
});

/** A settled repair (SPEC 9.2); `at`: when it was asked for (the cooldown spaces these). */
const replanEntrySchema = z.strictObject({
  n: z.int().describe("the repair's number in the run (its Idempotency-Key ends in it)"),
  stepId: z.string(),
  at: z.string(),
  diagnosis: z.string(),
  answer: z.enum(["repaired", "invalid", "declined", "unavailable"]),
  newStepIds: z.array(z.string()),
  attempts: z.int().describe("planner calls made"),
  answeredAt: z.string().optional(),
  reason: z.string().optional().describe("why it was not applied"),
});

const webhookStatusSchema = z.strictObject({
  url: z.string(),
  state: z.enum(["pending", "delivered", "failed"]),
  deliveries: z.array(
    z.strictObject({
      eventId: z.string(),
      type: z.string(),
      attempt: z.int(),
      at: z.string(),
      status: z.int().optional(),
      error: z.string().optional(),
    }),
  ),
});

export const runStatusSchema = z.strictObject({
  runId: z.string(),
  name: z.string().nullable(),
  status: runStatusValueSchema,
  tags: tagsSchema.optional().describe("the plan's tags (SPEC 8.1)"),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  mode: modeSchema,
  iterations: z.int(),
  iterationsRemaining: z.int(),
  progress: z.strictObject({
    completedSteps: z.int(),
    totalSteps: z.int(),
    percentage: z.number(),
    elapsedMs: z.int(),
    averageStepDurationMs: z.int(),
    estimatedTimeRemainingMs: z.int(),
    runningSteps: z.int(),
  }),
  summary: z.strictObject({
    totalSteps: z.int(),
    successfulSteps: z.int(),
    failedSteps: z.int(),
    skippedSteps: z.int(),
    cancelledSteps: z.int(),
  }),
  error: stepErrorSchema.optional(),
  steps: z.array(stepStatusSchema),
  pendingApproval: z
    .array(z.strictObject({ gate: z.enum(["risk", "step"]), stepIds: z.array(z.string()) }))
    .optional()
    .describe("what waits for POST /approve: the risk gate, or approval steps"),
  replans: z
    .array(replanEntrySchema)
    .optional()
    .describe("a plan with replan: the repairs asked for and settled, by n"),
  pendingReplan: z
    .array(
      z.strictObject({
        n: z.int(),
        stepId: z.string(),
        error: stepErrorSchema,
        diagnosis: z.string(),
      }),
    )
    .optional()
    .describe("replan mode human: the repairs waiting for POST /replan"),
  rollback: rollbackSchema
    .optional()
    .describe("config.rollback: the compensations of a failed run"),
  webhook: webhookStatusSchema.optional(),
});

export const eventSchema = z.strictObject({
  seq: z.int(),
  type: z.string(),
  at: z.string(),
  stepId: z.string().optional(),
  attempt: z.int().optional(),
  data: z.unknown().optional(),
});

export const eventsPageSchema = z.strictObject({
  events: z.array(eventSchema),
  next: z
    .int()
    .nullable()
    .describe("the `after` of the next page; null when there are no more events now"),
  dropped: z.int().describe("events dropped from the start of the log (MAX_EVENTS_PER_RUN)"),
});

/** `GET /v1/runs/:runId/plan`: the plan the run executes (a plan document, defaults filled in). */
export const runPlanSchema = z.strictObject({
  revision: z.int().describe("repairs applied to the plan (SPEC 9.2): 0 as submitted"),
  plan: planSchema(HARD_MAX_STEPS).describe(
    "every dependency (explicit and from templates) in dependsOn, by id; no webhook secret; header values [redacted]",
  ),
});
