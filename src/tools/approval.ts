/** The built-in `approval` tool: the step waits until `POST /v1/runs/:id/approve` answers it. */
import { z } from "zod";
import type { Tool } from "./tool";

export const approvalTool: Tool = {
  name: "approval",
  // Strict like every built-in tool's params: a misspelt `message` is a 400, not ignored.
  params: z.strictObject({ message: z.string().optional() }),
  async invoke() {
    return { suspend: { waitingFor: "approval" } };
  },
};
