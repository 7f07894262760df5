/** Builds the template context of SPEC 3.1, loading only the results in `refs`. */
import type { CompiledPlan } from "../src/engine/plan";
import { stepResult, type StepResult } from "../src/engine/status";
import { addStepResult, newTemplateContext, type TemplateContext } from "../src/engine/templates";
import type { RunStore } from "./store";

export function templateContext(
  store: RunStore,
  plan: CompiledPlan,
  runId: string,
  refs: readonly number[],
  cache: Map<number, StepResult>,
): TemplateContext {
  const context = newTemplateContext(plan.input, { id: runId, name: plan.name });
  for (const r of refs) {
    let result = cache.get(r);
    if (!result) {
      result = stepResult(
        store.step(r)!,
        plan.steps[r]!.forEach === undefined ? undefined : store.itemCounts(r).get(r)?.total,
      );
      cache.set(r, result);
    }
    addStepResult(context, r, plan.steps[r]!.id, result);
  }
  return context;
}
