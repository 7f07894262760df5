/**
 * Replanning (SPEC 9.2), the pure part: whether a step that failed for good asks for a repair
 * (the loop limits and the cooldown), what the planner's answer means, and the repaired plan:
 * the run's plan with the failed step redefined and new steps appended, validated like a
 * submission. The shell (durable-objects/replan/) calls the planner and commits.
 */
import type { Issue } from "../errors";
import { riskGateSteps } from "./approval";
import type { CompiledPlan, CompiledStep } from "./plan";
import { planDocument, withHeaderValuesOf } from "./plan-view";
import { giveUpSchema, repairStepsSchema, type ParsedStep, type RepairAnswer } from "./plan-schema";
import type { StepError } from "./records";
import { failureVerdict, type AttemptResult, type VerdictRules } from "./verdict";
import { compilePlan, zodIssues, type ValidationContext } from "./validate";

/**
 * Reads an answer against the one of its two shapes it means (`giveUp` says which), so its
 * issues name fields of that shape. `steps` are kept as written: the repaired plan is
 * validated whole (typos of step fields included) by `repairPlan`.
 */
export function readRepairAnswer(
  raw: unknown,
): { ok: true; answer: RepairAnswer } | { ok: false; issues: Issue[] } {
  const giveUp = typeof raw === "object" && raw !== null && "giveUp" in raw;
  const parsed = (giveUp ? giveUpSchema : repairStepsSchema).safeParse(raw);
  if (!parsed.success) return { ok: false, issues: zodIssues(parsed.error) };
  if ("giveUp" in parsed.data) return { ok: true, answer: parsed.data };
  return { ok: true, answer: { ...parsed.data, steps: (raw as { steps: ParsedStep[] }).steps } };
}

/** When the next repair may be asked for: `cooldownMs` after the latest one (null: none yet). */
export function cooldownEnd(latestAsked: number | null, cooldownMs: number): number | null {
  return latestAsked === null ? null : latestAsked + cooldownMs;
}

/** One line for the planner and the history: which step failed, how, after how many attempts. */
export function diagnose(step: CompiledStep, error: StepError, attempts: number): string {
  const { url, method } = step.params;
  const call =
    typeof url === "string" ? ` ${typeof method === "string" ? method : "GET"} ${url}` : "";
  const times = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  return `step "${step.id}" (${step.tool}${call}) failed for good after ${times} with ${error.category}: ${error.message}`;
}

export type PlannerVerdict =
  | { type: "answer"; answer: RepairAnswer }
  | { type: "retry"; at: number; error: StepError }
  /** `replan_unavailable` (the planner kept failing) or `replan_invalid` (its answer is no repair). */
  | { type: "failed"; error: StepError }
  | { type: "cancelled"; error: StepError };

/** How one planner call ended: an answer, a retry under the run's policy, or the repair failed. */
export function plannerVerdict(
  result: AttemptResult,
  rules: Pick<VerdictRules, "retry" | "counted" | "halted" | "cancelled" | "now" | "rand">,
): PlannerVerdict {
  if ("suspend" in result) throw new Error("a planner call does not suspend");
  if (result.ok) {
    const read = readRepairAnswer(result.data);
    if (read.ok) return { type: "answer", answer: read.answer };
    const issues = read.issues.map((i) => `${i.path || "answer"}: ${i.message}`);
    const message = `the planner's answer is not a repair ({ steps } or { giveUp: true }): ${issues.join("; ")}`;
    return { type: "failed", error: { category: "replan_invalid", message } };
  }
  const { category, message, status, retryAfterMs } = result;
  const error: StepError = { category, message, ...(status !== undefined && { status }) };
  const verdict = failureVerdict(error, rules, retryAfterMs);
  if (verdict.type !== "failed") return verdict;
  // It answered, with something that cannot be a repair (too large, not JSON): invalid, not unavailable.
  const answered =
    category === "output_too_large" ||
    (category === "invalid_data" && status !== undefined && status < 300);
  const failure = answered
    ? { category: "replan_invalid" as const, message: `the planner's answer: ${message}` }
    : {
        category: "replan_unavailable" as const,
        message: `the planner failed (${category}): ${message}`,
      };
  return { type: "failed", error: { ...failure, ...(status !== undefined && { status }) } };
}

export type RepairResult =
  | { ok: true; plan: CompiledPlan; newStepIds: string[] }
  /** Paths are into the repair (`steps.0.tool`), or into the run's plan (`plan.steps.3.dependsOn.0`). */
  | { ok: false; code: "invalid_plan" | "egress_denied"; issues: Issue[] };

/**
 * The run's plan repaired: step `failed` redefined by the repair's step with its id, the
 * repair's other steps appended (new ids only), the whole validated like a submission.
 */
export function repairPlan(
  plan: CompiledPlan,
  failed: number,
  steps: readonly unknown[],
  ctx: ValidationContext,
): RepairResult {
  const failedId = plan.steps[failed]!.id;
  const known = new Set(plan.steps.map((s) => s.id));
  const issues: Issue[] = [];
  let redefinition: number | undefined;
  /** A new step's id → where in the repair it is defined. */
  const addedAt = new Map<string, number>();
  steps.forEach((step, k) => {
    const id = (step as { id?: unknown } | null)?.id;
    if (typeof id !== "string")
      issues.push({ path: `steps.${k}.id`, message: "a repair step needs an id" });
    else if (id === failedId) {
      if (redefinition === undefined) redefinition = k;
      else issues.push({ path: `steps.${k}.id`, message: `"${id}" is defined twice` });
    } else if (known.has(id))
      issues.push({
        path: `steps.${k}.id`,
        message: `step "${id}" already exists: a repair redefines only the failed step "${failedId}" and adds steps with new ids`,
      });
    else if (addedAt.has(id))
      issues.push({
        path: `steps.${k}.id`,
        message: `"${id}" is defined twice in the repair (also steps.${addedAt.get(id)})`,
      });
    else addedAt.set(id, k);
  });
  if (redefinition === undefined)
    issues.push({
      path: "steps",
      message: `the repair has no step "${failedId}" (the failed step's new definition)`,
    });
  if (issues.length > 0) return { ok: false, code: "invalid_plan", issues };
  const added = [...addedAt.values()]; // the new steps, in the repair's order

  const document = planDocument(plan, { redact: false });
  const merged = { ...document, steps: [...document.steps] as unknown[] };
  merged.steps[failed] = withHeaderValuesOf(plan.steps[failed]!, steps[redefinition!]);
  for (const k of added) merged.steps.push(steps[k]);
  const tooLarge = sizeIssue(merged, ctx.maxPlanBytes);
  if (tooLarge) return { ok: false, code: "invalid_plan", issues: [tooLarge] };
  const result = compilePlan(merged, ctx);
  if (!result.ok) {
    const answerIndex = (m: number) =>
      m === failed ? redefinition! : m >= plan.steps.length ? added[m - plan.steps.length]! : null;
    const mapped = result.issues.map((i) => ({ ...i, path: repairPath(i.path, answerIndex) }));
    return { ok: false, code: result.code, issues: mapped };
  }
  const gated = gateIssues(result.plan, [redefinition!, ...added], steps);
  if (gated.length > 0) return { ok: false, code: "invalid_plan", issues: gated };
  return {
    ok: true,
    plan: { ...result.plan, revision: (plan.revision ?? 0) + 1 },
    newStepIds: added.map((k) => (steps[k] as { id: string }).id),
  };
}

/** The merged plan is held to MAX_PLAN_BYTES, as a submission is (SPEC 9.2: validated like one). */
function sizeIssue(merged: unknown, max: number | undefined): Issue | null {
  if (max === undefined) return null;
  const bytes = new TextEncoder().encode(JSON.stringify(merged)).byteLength;
  if (bytes <= max) return null;
  return {
    path: "plan",
    message: `the plan with this repair merged in would be ${bytes} bytes, more than MAX_PLAN_BYTES (${max})`,
  };
}

/**
 * A repair may not bring a step that needs approval (SPEC 5.4): the risk gate was answered
 * before the run started, for the steps as they were then. One issue per such step of the
 * repair (`answered`: the repair's steps, by their index in it).
 */
function gateIssues(merged: CompiledPlan, indexes: number[], answered: readonly unknown[]) {
  const gated = new Set(riskGateSteps(merged));
  const threshold = merged.config.requireApprovalForRisk;
  return indexes
    .filter((k) => gated.has((answered[k] as { id: string }).id))
    .map((k) => ({
      path: `steps.${k}.risk`,
      message: `step "${(answered[k] as { id: string }).id}" would need approval (risk at or above requireApprovalForRisk "${threshold}"), and a repair cannot pass the risk gate, answered before the run started`,
    }));
}

/** A path into the merged plan, as a path into the repair (its steps) or into the run's plan. */
function repairPath(path: string, answerIndex: (merged: number) => number | null): string {
  const m = /^steps\.(\d+)(.*)$/.exec(path);
  if (!m) return path === "" ? "plan" : `plan.${path}`;
  const k = answerIndex(Number(m[1]));
  return k === null ? `plan.${path}` : `steps.${k}${m[2]}`;
}
