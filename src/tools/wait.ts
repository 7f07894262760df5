/**
 * The built-in `wait` tool: a durable sleep (`ms` or `until`), driven by the alarm, never a
 * timer. A wait lasts at most 365 days (src/engine/time-limits.ts): literal values are
 * checked at submission, templated ones when the step runs.
 */
import { z } from "zod";
import { containsTemplate } from "../engine/templates";
import { waitEnd, waitMsProblem, waitUntilProblem } from "../engine/time-limits";
import type { Tool } from "./tool";

/** A check of a literal value; a template is checked once resolved, when the step runs. */
function unlessTemplated<T>(problem: (value: T) => string | null) {
  return (value: T, ctx: z.RefinementCtx) => {
    if (typeof value === "string" && containsTemplate(value)) return;
    const message = problem(value);
    if (message) ctx.addIssue({ code: "custom", message });
  };
}

const paramsSchema = z
  .strictObject({
    ms: z.union([z.number(), z.string()]).superRefine(unlessTemplated(waitMsProblem)).optional(),
    until: z
      .string()
      .superRefine(unlessTemplated((until: string) => waitUntilProblem(until, Date.now())))
      .optional(),
  })
  .refine((p) => (p.ms === undefined) !== (p.until === undefined), {
    message: "give exactly one of ms or until",
  });

export const waitTool: Tool = {
  name: "wait",
  params: paramsSchema,
  async invoke(params, call) {
    const parsed = paramsSchema.safeParse(params);
    const end = parsed.success
      ? waitEnd(parsed.data, call.now)
      : { problem: z.prettifyError(parsed.error) };
    if ("problem" in end)
      return { ok: false, category: "invalid_data", message: `wait: ${end.problem}` };
    return { suspend: { waitingFor: "timer", until: end.at } };
  },
};
