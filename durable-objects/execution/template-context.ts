/**
 * Builds the template context of SPEC 3.1, loading only the results in `refs`: from `cache`,
 * else from their rows (then kept in `cache`).
 */
import type { CompiledPlan, CompiledStep } from "../../src/engine/plan";
import { stepResult, type StepResult } from "../../src/engine/status";
import {
  addStepResult,
  newTemplateContext,
  type TemplateContext,
} from "../../src/engine/templates";
import type { Verdict } from "../../src/engine/verdict";
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

/**
 * A success just committed, kept in `cache` as its row would give it, so the steps that read
 * it need not read the row back. (A forEach step ends through its items, never here: its
 * result counts them, and is read from rows.)
 */
export function keepResult(
  cache: Map<number, StepResult>,
  step: CompiledStep,
  attempt: number,
  verdict: Extract<Verdict, { type: "succeeded" }>,
  startedAt: number,
  now: number,
): void {
  const { index, id, tool } = step;
  const row = { index, id, tool, status: "succeeded", reason: null, attempts: attempt } as const;
  const times = { startedAt, endedAt: now, executionMs: now - startedAt };
  const rest = { nextAttemptAt: null, waitingFor: null, error: null };
  cache.set(
    index,
    stepResult({ ...row, ...times, ...rest, data: verdict.data, httpStatus: verdict.status }),
  );
}
