/** Builds the template context of SPEC 3.1, loading only the results in `refs`. */
import type { CompiledPlan } from "../../src/engine/plan";
import { stepResult, type StepResult } from "../../src/engine/status";
import {
  addStepResult,
  newTemplateContext,
  type TemplateContext,
} from "../../src/engine/templates";
import type { Checkpoint } from "../storage/checkpoint";

export function templateContext(
  c: Checkpoint,
  plan: CompiledPlan,
  runId: string,
  refs: readonly number[],
  cache: Map<number, StepResult>,
): TemplateContext {
  const context = newTemplateContext(plan.input, { id: runId, name: plan.name });
  for (const r of refs) {
    let result = cache.get(r);
    if (!result) {
      const items = plan.steps[r]!.forEach === undefined ? undefined : c.items.counts(r).get(r);
      result = stepResult(c.steps.get(r)!, items?.total);
      cache.set(r, result);
    }
    addStepResult(context, r, plan.steps[r]!.id, result);
  }
  return context;
}
