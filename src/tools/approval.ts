/** The built-in `approval` tool: the step waits until `POST /v1/runs/:id/approve` answers it. */
import { z } from "zod";
import type { Tool } from "./tool";

export const approvalTool: Tool = {
  name: "approval",
  params: z.object({ message: z.string().optional() }).loose(),
  async invoke() {
    return { suspend: { waitingFor: "approval" } };
  },
};
