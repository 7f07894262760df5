/**
 * What a step's verdicts check besides the attempt (SPEC 9): its `verify`, with the template
 * context of its references, and, when the plan replans, what the run may still ask for
 * (its repairs so far and the cooldown), read from the checkpoint.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import { cooldownEnd } from "../../src/engine/replan";
import type { StepChecks } from "../../src/engine/verdict";
import type { RunContext } from "../run-context";
import { templateContext } from "./template-context";

export function stepChecks(
  ctx: RunContext,
  plan: CompiledPlan,
  i: number,
  runId: string,
  now: number,
): StepChecks {
  const c = ctx.checkpoint;
  const step = plan.steps[i]!;
  const verify =
    step.verify === undefined
      ? null
      : {
          template: step.verify,
          context: templateContext(c, plan, runId, step.refs, ctx.results),
        };
  const { replan } = plan;
  if (!replan) return { verify };
  const used = c.replans.counts(step.id);
  return {
    verify,
    replan: {
      mode: replan.mode,
      maxPerStep: replan.maxReplansPerStep,
      usedByStep: used.byStep,
      maxTotal: replan.maxTotalReplans,
      usedTotal: used.total,
      notBefore: cooldownEnd(c.replans.latestAsked(), replan.cooldownMs),
      now,
    },
  };
}
