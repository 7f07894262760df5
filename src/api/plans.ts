/** `POST /v1/plans/validate`: validation and the plan's shape, without running anything. */
import { Hono, type Context } from "hono";
import { criticalPath, levelsOf, topologicalOrder } from "../engine/graph";
import type { CompiledPlan } from "../engine/plan";
import { compilePlan } from "../engine/validate";
import { settings, validationContext, type Settings } from "../env";
import { InvalidPlanError, type Issue } from "../errors";
import { readJson } from "./body";
import { takesNoQuery } from "./validate-input";
import type { AppEnv } from "./types";

export const planRoutes = new Hono<AppEnv>();

/**
 * Reads, validates and compiles a submitted plan; throws a 400/413 naming every problem.
 * `warnings` (unknown step fields that were ignored) go into the answer when there are any.
 */
export async function compileRequest(
  c: Context<AppEnv>,
  config: Settings,
): Promise<{ plan: CompiledPlan; warnings?: Issue[] }> {
  const raw = await readJson(c, {
    maxBytes: config.maxPlanBytes,
    what: "plan",
    maxDepth: config.maxJsonDepth,
  });
  const result = compilePlan(raw, validationContext(config));
  if (!result.ok) throw new InvalidPlanError(result.issues, result.code);
  return { plan: result.plan, ...(result.warnings.length > 0 && { warnings: result.warnings }) };
}

planRoutes.post("/validate", async (c) => {
  takesNoQuery(c);
  const { plan, warnings } = await compileRequest(c, settings(c.env));
  const deps = plan.steps.map((s) => s.deps);
  const order = topologicalOrder(deps)!;
  const ids = (list: number[]) => list.map((i) => plan.steps[i]!.id);
  return c.json({
    valid: true,
    order: ids(order),
    levels: levelsOf(deps, order).map(ids),
    criticalPath: ids(criticalPath(deps, order).path),
    ...(warnings && { warnings }),
  });
});
