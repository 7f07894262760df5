/** The built-in `pass` tool: `data` is the resolved `params.value` (reshapes data between steps). */
import { z } from "zod";
import type { Tool, ToolResult } from "./tool";

const answer = (params: Record<string, unknown>): ToolResult => ({
  ok: true,
  data: params.value ?? null,
});

export const passTool: Tool = {
  name: "pass",
  params: z.strictObject({ value: z.unknown().optional() }),
  invoke: async (params) => answer(params),
  answerNow: answer,
};
