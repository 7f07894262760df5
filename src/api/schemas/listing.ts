/**
 * SPEC 8 (finding and cleaning up runs): `GET /v1/runs`, `GET /v1/stats` and
 * `DELETE /v1/runs/:runId` (204, no body). The routes validate with these and the typed client
 * and the OpenAPI document are derived from them.
 *
 * A route reads the query as `parseQuery(c, listRunsQuerySchema, ["tag"])` (`tag` may
 * repeat), so a bad parameter is a 400 whose issue path names it (`query.status`).
 */
import { z } from "zod";
import { STEP_ID_PATTERN, tagsSchema, tagValueSchema } from "../../engine/plan-schema.ts";
import { RUN_STATUSES, runStatusValueSchema, runStatusSchema } from "./core.ts";
import { commaList, instantParam, intParam } from "./query.ts";

const TAG_FILTER = /^([^:]*):([\s\S]*)$/;

/** `tag=key:value`, repeatable: every one must match. Parsed to `{ key, value }` pairs. */
const tagFilters = z
  .array(z.string())
  .max(20, "at most 20 tag filters")
  .transform((filters, ctx) => {
    const parsed: { key: string; value: string }[] = [];
    for (const filter of filters) {
      const m = TAG_FILTER.exec(filter);
      if (!m || !STEP_ID_PATTERN.test(m[1]!) || !tagValueSchema.safeParse(m[2]).success) {
        ctx.addIssue({
          code: "custom",
          message: `"${filter.slice(0, 80)}" is not key:value (a key matching ^[A-Za-z0-9_.-]{1,64}$, a value of at most 256 characters)`,
        });
        return z.NEVER;
      }
      parsed.push({ key: m[1]!, value: m[2]! });
    }
    return parsed;
  })
  .describe("key:value; repeat the parameter to require several tags");

/** `GET /v1/stats` takes no parameter: a filter it would ignore (`?status=failed`) is a 400. */
export const statsQuerySchema = z.strictObject({});

export const listRunsQuerySchema = z.strictObject({
  status: commaList(RUN_STATUSES).optional(),
  name: z.string().min(1).max(200).optional().describe("the plan's name, exact match"),
  tag: tagFilters.optional(),
  createdAfter: instantParam().optional(),
  createdBefore: instantParam("up").optional(),
  limit: intParam(1, 200, 50),
  cursor: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe("the `next` of the previous page (opaque)"),
});

/** One run in a listing: the status document's header, its tags, and the progress counters. */
export const runListEntrySchema = runStatusSchema
  .pick({
    runId: true,
    name: true,
    status: true,
    createdAt: true,
    startedAt: true,
    endedAt: true,
    summary: true,
  })
  .extend({
    tags: tagsSchema,
    progress: runStatusSchema.shape.progress.pick({
      completedSteps: true,
      totalSteps: true,
      percentage: true,
    }),
  });

export const runListSchema = z.strictObject({
  runs: z.array(runListEntrySchema).describe("newest first (createdAt descending, then runId)"),
  next: z.string().nullable().describe("the `cursor` of the following page; null on the last"),
});

export const statsSchema = z.strictObject({
  total: z.int().min(0),
  byStatus: z
    .partialRecord(runStatusValueSchema, z.int().min(0))
    .describe("runs per status; a status with no run may be left out"),
});
