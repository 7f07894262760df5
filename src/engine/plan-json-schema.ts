/** The plan's JSON Schema (docs/plan.schema.json), generated from the zod schema. */
import { z } from "zod";
import { HARD_MAX_STEPS, planSchema } from "./plan-schema.ts";

export function planJsonSchema(): Record<string, unknown> {
  return {
    ...(z.toJSONSchema(planSchema(HARD_MAX_STEPS), {
      io: "input",
      unrepresentable: "any",
    }) as Record<string, unknown>),
    $id: "https://github.com/edgestep/edgestep/docs/plan.schema.json",
    title: "edgestep plan",
  };
}
