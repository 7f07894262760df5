/**
 * zod schemas of the API's inputs and main outputs. Routes validate with them and the
 * OpenAPI document (src/api/openapi.ts) is generated from them, so the two cannot drift.
 */
import { z } from "zod";

export const resumeBodySchema = z.strictObject({
  iterations: z.int().min(1).max(1_000_000).optional().describe("more iterations (default: the plan's bound)"),
});

export const approveBodySchema = z.strictObject({
  approved: z.boolean(),
  skipSteps: z.array(z.string()).max(10_000).optional().describe("risk gate: steps to skip (skipped_by_user)"),
  stepId: z.string().optional().describe("the approval step to answer (default: the only one waiting)"),
  comment: z.string().max(2000).optional(),
});

export const callbackBodySchema = z.union([
  z.strictObject({ output: z.unknown() }).describe("the step succeeds with data = output"),
  z.strictObject({ error: z.strictObject({ message: z.string().max(10_000) }) }).describe("the step fails (callback_failed)"),
]);

export const eventsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0).describe("return events with seq greater than this"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const errorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

export const runCreatedSchema = z.object({
  runId: z.string().regex(/^run_[0-9a-f]{32}$/),
  status: z.string(),
  statusUrl: z.url(),
});

export const validateResultSchema = z.object({
  valid: z.literal(true),
  order: z.array(z.string()).describe("step ids in a topological order"),
  levels: z.array(z.array(z.string())).describe("step ids by dependency depth"),
  criticalPath: z.array(z.string()).describe("step ids of the longest chain, by step count"),
});

export const controlResultSchema = z.object({ runId: z.string(), status: z.string() });

const stepErrorSchema = z.object({ category: z.string(), message: z.string(), status: z.int().optional() });

export const stepStatusSchema = z.object({
  id: z.string(),
  index: z.int(),
  tool: z.string(),
  status: z.enum(["pending", "running", "retrying", "waiting", "succeeded", "failed", "skipped", "cancelled"]),
  reason: z.string().optional(),
  attempts: z.int(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  durationMs: z.int().nullable(),
  nextAttemptAt: z.string().optional(),
  waitingFor: z.enum(["approval", "callback", "timer"]).optional(),
  error: stepErrorSchema.optional(),
});

export const stepResultSchema = z.object({
  stepId: z.string(),
  success: z.boolean(),
  tool: z.string(),
  data: z.unknown(),
  error: stepErrorSchema.optional(),
  metadata: z.object({
    executionTime: z.int().nullable(),
    timestamp: z.string().nullable(),
    attempts: z.int(),
    retries: z.int(),
    status: z.int().optional(),
  }),
});

export const runStatusSchema = z.object({
  runId: z.string(),
  name: z.string().nullable(),
  status: z.enum(["pending", "running", "waiting", "paused", "completed", "partial", "failed", "cancelled"]),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  mode: z.object({ type: z.enum(["continuous", "bounded"]) }).loose(),
  iterations: z.int(),
  iterationsRemaining: z.int(),
  progress: z.object({
    completedSteps: z.int(),
    totalSteps: z.int(),
    percentage: z.number(),
    elapsedMs: z.int(),
    averageStepDurationMs: z.int(),
    estimatedTimeRemainingMs: z.int(),
    runningSteps: z.int(),
  }),
  summary: z.object({
    totalSteps: z.int(),
    successfulSteps: z.int(),
    failedSteps: z.int(),
    skippedSteps: z.int(),
    cancelledSteps: z.int(),
  }),
  error: stepErrorSchema.optional(),
  steps: z.array(stepStatusSchema),
  webhook: z
    .object({
      url: z.string(),
      state: z.enum(["pending", "delivered", "failed"]),
      deliveries: z.array(
        z.object({ eventId: z.string(), type: z.string(), attempt: z.int(), at: z.string(), status: z.int().optional(), error: z.string().optional() }),
      ),
    })
    .optional(),
});

export const eventSchema = z.object({
  seq: z.int(),
  type: z.string(),
  at: z.string(),
  stepId: z.string().optional(),
  attempt: z.int().optional(),
  data: z.unknown().optional(),
});

export const eventsPageSchema = z.object({
  events: z.array(eventSchema),
  next: z.int().nullable().describe("the `after` of the next page; null when there are no more events now"),
  dropped: z.int().describe("events dropped from the start of the log (MAX_EVENTS_PER_RUN)"),
});
