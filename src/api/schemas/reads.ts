/**
 * SPEC 6.1 (cheap status reads): `GET /v1/runs/:runId?view=&wait=` (with `ETag`,
 * `If-None-Match` and `304`) and `GET /v1/runs/:runId/steps?status=&after=&limit=`.
 * The routes validate with these and the typed client and the OpenAPI document are derived
 * from them. Read them with `parseQuery(c, schema)`.
 */
import { z } from "zod";
import { STEP_STATUSES, runStatusSchema, stepStatusSchema } from "./core.ts";
import { commaList, intParam } from "./query.ts";

export const runQuerySchema = z.strictObject({
  view: z
    .enum(["full", "summary"])
    .default("full")
    .describe("summary: every field but `steps`, in a size independent of the plan's"),
  wait: intParam(1, 30_000)
    .optional()
    .describe(
      "long poll: answer as soon as the document differs from the one If-None-Match names, at the latest after this many ms (then 304)",
    ),
});

/** `?view=summary`: the status document without `steps`. */
export const runSummarySchema = runStatusSchema.omit({ steps: true });

export const stepsQuerySchema = z.strictObject({
  status: commaList(STEP_STATUSES).optional(),
  after: intParam(0, Number.MAX_SAFE_INTEGER)
    .optional()
    .describe("a step index: the page starts after it (exclusive)"),
  limit: intParam(1, 1000, 100),
});

export const stepsPageSchema = z.strictObject({
  steps: z.array(stepStatusSchema).describe("in plan order"),
  next: z
    .int()
    .nullable()
    .describe("the `after` of the following page (the last index on this one); null on the last"),
});
