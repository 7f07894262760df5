/** The risk gate (SPEC 5.4): which steps need approval before a run starts. Pure. */
import type { CompiledPlan } from "./plan";

const RANK = { low: 0, medium: 1, high: 2 } as const;

export function riskGateSteps(plan: CompiledPlan): string[] {
  const threshold = plan.config.requireApprovalForRisk;
  if (!threshold) return [];
  return plan.steps
    .filter((s) => s.risk !== undefined && RANK[s.risk] >= RANK[threshold])
    .filter((s) => !(s.readonly && plan.config.autoApproveReadonly))
    .map((s) => s.id);
}
