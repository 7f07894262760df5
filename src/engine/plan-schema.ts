/**
 * The plan document (SPEC 2) as one zod schema: the source of the plan's types,
 * its validation errors, the OpenAPI document and `docs/plan.schema.json`.
 */
import { z } from "zod";
import { dataRecord } from "./data-record.ts";

export const STEP_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const DEFAULT_MAX_STEPS = 1000;
export const HARD_MAX_STEPS = 10_000;
const MAX_DELAY_MS = 3_600_000;

const stepId = z.string().regex(STEP_ID_PATTERN, "must match ^[A-Za-z0-9_.-]{1,64}$");
/** A step's own id: also a URL path segment (`/steps/:stepId`), which "." and ".." cannot be. */
const ownStepId = stepId.refine((id) => id !== "." && id !== "..", {
  message:
    'must not be "." or "..": a URL cannot name such a step (GET /v1/runs/:runId/steps/:stepId)',
});

const timeoutMs = z.int().min(100).max(900_000);

export const retrySchema = z.strictObject({
  maxRetries: z.int().min(0).max(20).optional(),
  baseDelayMs: z.int().min(0).max(MAX_DELAY_MS).optional(),
  maxDelayMs: z.int().min(0).max(MAX_DELAY_MS).optional(),
  jitter: z.enum(["full", "none"]).optional(),
});

export const modeSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("continuous"),
    maxIterations: z.int().min(1).max(1_000_000).default(10_000),
  }),
  z.strictObject({
    type: z.literal("bounded"),
    iterations: z.int().min(1).max(1_000_000).default(5),
  }),
]);

export const configSchema = z.strictObject({
  maxParallel: z.int().min(1).max(100).default(5),
  stepTimeoutMs: timeoutMs.default(30_000),
  retry: retrySchema.prefault({}),
  failFast: z.boolean().default(false),
  mode: modeSchema.prefault({ type: "continuous" }),
  requireApprovalForRisk: z.enum(["medium", "high"]).optional(),
  autoApproveReadonly: z.boolean().default(true),
  rollback: z.boolean().default(false),
  retentionDays: z
    .int()
    .min(1)
    .max(3650)
    .optional()
    .describe("days the run is kept once final (default: the Worker's RUN_RETENTION_DAYS)"),
});

const dependency = z.union([stepId, z.int().min(0)]);
// Keys are user data: a `__proto__` key is kept (z.record would drop it).
const params = dataRecord(z.unknown());

export const stepSchema = z.object({
  id: ownStepId.optional(),
  tool: z.string().min(1, "must name a tool"),
  params: params.default({}),
  dependsOn: z.array(dependency).optional(),
  depends_on: z.array(dependency).optional().describe("alias of dependsOn"),
  when: z.union([z.string(), z.boolean()]).optional(),
  trigger: z.enum(["all_success", "all_done"]).default("all_success"),
  retry: retrySchema.optional(),
  timeoutMs: timeoutMs.optional(),
  onFailure: z.enum(["fail_run", "continue"]).optional(),
  risk: z.enum(["low", "medium", "high"]).optional(),
  readonly: z.boolean().optional(),
  compensate: z.strictObject({ tool: z.string().min(1), params: params.default({}) }).optional(),
  forEach: z.union([z.string(), z.array(z.unknown())]).optional(),
  verify: z
    .string()
    // A literal would always pass (or, empty, always fail): only a template checks the output.
    .refine((v) => v.includes("${"), {
      message: "verify is a template that reads the output, such as ${output.items.length}",
    })
    .optional()
    .describe("a template the step's output must satisfy (`${output...}`): falsy fails the step"),
  maxConcurrency: z.int().min(1).max(100).optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  parallel: z.boolean().optional(),
});

export const webhookSchema = z.strictObject({
  url: z.string().min(1),
  secret: z.string().min(1).max(1024).optional(),
});

/**
 * Replanning (SPEC 9.2): a planner at `url` (or, with `mode: "human"`, a person through
 * `POST /v1/runs/:id/replan`) repairs a step that failed for good, within these limits.
 */
export const replanSchema = z
  .strictObject({
    mode: z.enum(["url", "human"]).default("url"),
    url: z.string().min(1).optional().describe("the planner (mode url): a signed POST per repair"),
    maxReplansPerStep: z.int().min(0).max(10).default(3),
    maxTotalReplans: z.int().min(0).max(50).default(5),
    cooldownMs: z.int().min(0).max(600_000).default(1000),
    timeoutMs: timeoutMs.optional().describe("per planner call; default config.stepTimeoutMs"),
  })
  .superRefine((replan, ctx) => {
    if (replan.mode === "human" && replan.url !== undefined)
      ctx.addIssue({ code: "custom", path: ["url"], message: 'a "human" replan takes no url' });
    if (replan.mode === "url" && replan.url === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: 'the planner\'s url is required (or "mode": "human")',
      });
  });

/** A tag's value; a listing's tag filter takes the same (zod counts characters, not UTF-16 units). */
export const tagValueSchema = z.string().max(256, "a tag value has at most 256 characters");

/**
 * A run's tags (SPEC 8.1): at most 20, keys like step ids, string values of at most 256
 * characters. Status and listing documents show them and listings filter on them. Keys are
 * the user's data: a `__proto__` tag is kept (z.record would drop it).
 */
export const tagsSchema = dataRecord(tagValueSchema, {
  key: { pattern: STEP_ID_PATTERN, message: "a tag key must match ^[A-Za-z0-9_.-]{1,64}$" },
  maxEntries: { count: 20, message: "at most 20 tags" },
}).describe("the run's tags: what listings filter on (GET /v1/runs?tag=key:value)");

/**
 * The plan's schema for a step limit. Built once per limit: zod compiles a schema on its
 * first parse, and building it for every submission cost each POST about 0.8 ms.
 */
export function planSchema(maxSteps = DEFAULT_MAX_STEPS) {
  let schema = planSchemas.get(maxSteps);
  if (!schema) planSchemas.set(maxSteps, (schema = buildPlanSchema(maxSteps)));
  return schema;
}

const planSchemas = new Map<number, ReturnType<typeof buildPlanSchema>>();

function buildPlanSchema(maxSteps: number) {
  return z.strictObject({
    $schema: z
      .string()
      .max(2048)
      .optional()
      .describe("the plan's JSON Schema (docs/plan.schema.json), for editors; ignored"),
    name: z.string().max(200).optional(),
    tags: tagsSchema.optional(),
    input: z.unknown().optional(),
    config: configSchema.prefault({}),
    webhook: webhookSchema.optional(),
    replan: replanSchema.optional(),
    steps: z
      .array(stepSchema)
      .min(1, "a plan needs at least one step")
      .max(maxSteps, `a plan may have at most ${maxSteps} steps (MAX_STEPS_PER_PLAN)`),
  });
}

/** `POST /v1/runs/:id/replan` names the repair it answers when several wait; a planner's answer needs none. */
const repairOf = stepId
  .optional()
  .describe("POST /replan: the step whose repair this is (needed when several wait)");

/** A repair (SPEC 9.2): the planner's 200 answer, and the body of `POST /v1/runs/:id/replan`. */
export const repairStepsSchema = z.strictObject({
  stepId: repairOf,
  steps: z
    .array(stepSchema)
    .min(1, "a repair needs the failed step's new definition")
    .describe("the failed step's new definition (its id) and any new steps (new ids)"),
});
export const giveUpSchema = z.strictObject({
  stepId: repairOf,
  giveUp: z.literal(true),
  reason: z.string().max(10_000).optional(),
});

export const repairAnswerSchema = z.union([repairStepsSchema, giveUpSchema]);
export type RepairAnswer = z.output<typeof repairAnswerSchema>;

export type PlanInput = z.input<ReturnType<typeof planSchema>>;
export type ParsedPlan = z.output<ReturnType<typeof planSchema>>;
export type ParsedStep = z.output<typeof stepSchema>;
export type PlanConfig = z.output<typeof configSchema>;
export type RetryOverrides = z.output<typeof retrySchema>;
export type RunMode = z.output<typeof modeSchema>;
export type ReplanConfig = z.output<typeof replanSchema>;
