/** The compiled plan: what a run stores and the scheduler reads. Produced by `compilePlan`. */
import type { PlanConfig, ReplanConfig } from "./plan-schema";
import type { RetryPolicy } from "./retry";

export interface CompiledStep {
  index: number;
  id: string;
  tool: string;
  /** Raw params, templates unresolved. */
  params: Record<string, unknown>;
  /** Explicit and implicit dependencies, by index, deduplicated. */
  deps: number[];
  /** Steps whose results templates read (a subset of `deps`). */
  refs: number[];
  when?: string | boolean;
  trigger: "all_success" | "all_done";
  retry: RetryPolicy;
  timeoutMs: number;
  onFailure: "fail_run" | "continue";
  risk?: "low" | "medium" | "high";
  readonly?: boolean;
  /** The undo action run on rollback; `refs` are the steps its templates read. */
  compensate?: { tool: string; params: Record<string, unknown>; refs: number[] };
  forEach?: string | unknown[];
  maxConcurrency?: number;
  /** A template the output must satisfy (SPEC 9.1); its step references are in `refs`. */
  verify?: string;
}

export interface CompiledPlan {
  name: string | null;
  /** The plan's tags (SPEC 8.1); `{}` when it has none (and for plans stored before tags). */
  tags: Record<string, string>;
  input: unknown;
  config: PlanConfig;
  webhook?: { url: string; secret?: string };
  /** Who repairs a step that failed for good (SPEC 9.2). */
  replan?: ReplanConfig;
  /** Repairs applied to the plan (SPEC 9.2): absent (0) as submitted. */
  revision?: number;
  steps: CompiledStep[];
}

/** What a plan may ever do that a status read would otherwise look for in storage. */
export interface PlanFeatures {
  /** A step may wait for an approval (the `approval` tool). */
  approvals: boolean;
  /** A step may be compensated on rollback. */
  compensations: boolean;
}

const features = new WeakMap<CompiledPlan, PlanFeatures>();

/** The plan's features, worked out once per plan (a repair makes a new plan). */
export function planFeatures(plan: CompiledPlan): PlanFeatures {
  let found = features.get(plan);
  if (!found) {
    found = {
      approvals: plan.steps.some((s) => s.tool === "approval"),
      compensations: plan.steps.some((s) => s.compensate !== undefined),
    };
    features.set(plan, found);
  }
  return found;
}
