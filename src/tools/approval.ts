/** The built-in `approval` tool: the step waits until `POST /v1/runs/:id/approve` answers it. */
import { z } from "zod";
import { invalidParams, type Tool } from "./tool";

// Strict like every built-in tool's params: a misspelt `message` is a 400, not ignored.
const paramsSchema = z.strictObject({ message: z.string().optional() });

export const approvalTool: Tool = {
  name: "approval",
  params: paramsSchema,
  async invoke(params) {
    // A templated `message` is only known now (SPEC 3): one that is not text fails the step.
    const parsed = paramsSchema.safeParse(params);
    if (!parsed.success) return invalidParams("approval", parsed.error);
    return { suspend: { waitingFor: "approval" } };
  },
};
