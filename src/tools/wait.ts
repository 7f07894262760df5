/** The built-in `wait` tool: a durable sleep (`ms` or `until`), driven by the alarm, never a timer. */
import { z } from "zod";
import type { Tool } from "./tool";

const paramsSchema = z
  .strictObject({
    ms: z
      .union([
        z
          .int()
          .min(0)
          .max(365 * 86_400_000),
        z.string(),
      ])
      .optional(),
    until: z.string().optional(),
  })
  .refine((p) => (p.ms === undefined) !== (p.until === undefined), {
    message: "give exactly one of ms or until",
  });

export const waitTool: Tool = {
  name: "wait",
  params: paramsSchema,
  async invoke(params, call) {
    const parsed = paramsSchema.safeParse(params);
    if (!parsed.success)
      return { ok: false, category: "invalid_data", message: z.prettifyError(parsed.error) };
    const { ms, until } = parsed.data;
    const at = until !== undefined ? Date.parse(until) : call.now + Number(ms);
    if (Number.isNaN(at)) {
      return {
        ok: false,
        category: "invalid_data",
        message: `wait: "${until ?? ms}" is not a time`,
      };
    }
    return { suspend: { waitingFor: "timer", until: at } };
  },
};
