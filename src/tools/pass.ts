/** The built-in `pass` tool: `data` is the resolved `params.value` (reshapes data between steps). */
import { z } from "zod";
import type { Tool } from "./tool";

export const passTool: Tool = {
  name: "pass",
  params: z.strictObject({ value: z.unknown().optional() }),
  async invoke(params) {
    return { ok: true, data: params.value ?? null };
  },
  answerNow(params) {
    return { ok: true, data: params.value ?? null };
  },
};
