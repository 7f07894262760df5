/**
 * The last step of plan validation: a checked plan becomes the CompiledPlan the engine runs,
 * with every default filled in (retry, timeout, onFailure from the plan's config) so nothing
 * downstream has to know them. Runs only once the cross-field checks passed. Pure.
 */
import type { CompiledPlan, CompiledStep } from "./plan";
import type { ParsedPlan } from "./plan-schema";
import { DEFAULT_RETRY } from "./retry";

/** `ids[i]`, `deps[i]`, `refs[i]`, `compensateRefs[i]`: what the checks found for step i. */
export function buildCompiledPlan(
  plan: ParsedPlan,
  ids: readonly string[],
  deps: number[][],
  refs: number[][],
  compensateRefs: number[][],
): CompiledPlan {
  const config = { ...plan.config, retry: { ...DEFAULT_RETRY, ...plan.config.retry } };
  const steps = plan.steps.map((s, i): CompiledStep => ({
    index: i,
    id: ids[i]!,
    tool: s.tool,
    params: s.params,
    deps: deps[i]!,
    refs: refs[i]!,
    ...(s.when !== undefined && { when: s.when }),
    trigger: s.trigger,
    retry: { ...config.retry, ...s.retry },
    timeoutMs: s.timeoutMs ?? config.stepTimeoutMs,
    onFailure: s.onFailure ?? (config.failFast ? "fail_run" : "continue"),
    ...(s.risk && { risk: s.risk }),
    ...(s.readonly !== undefined && { readonly: s.readonly }),
    ...(s.compensate && { compensate: { ...s.compensate, refs: compensateRefs[i]! } }),
    ...(s.forEach !== undefined && { forEach: s.forEach }),
    ...(s.maxConcurrency !== undefined && { maxConcurrency: s.maxConcurrency }),
    ...(s.verify !== undefined && { verify: s.verify }),
  }));
  return {
    name: plan.name ?? null,
    tags: plan.tags ?? {},
    input: plan.input ?? null,
    config,
    ...(plan.webhook && { webhook: plan.webhook }),
    ...(plan.replan && { replan: plan.replan }),
    steps,
  };
}
