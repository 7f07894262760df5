/**
 * One call to a run's planner (SPEC 9.2): the request body (`runId, stepId, attempt, error,
 * diagnosis, step, params, completed, plan, replans`), signed like a webhook (SPEC 5.7) and
 * sent with `Idempotency-Key: <runId>:<stepId>:replan:<n>` (the same across retries) and
 * `X-Edgestep-Attempt`, through the `http` tool's client: its timeout, bounded and parsed
 * answer, ALLOWED_HOSTS on every hop, and the error categories of SPEC 5.2.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import { planDocument, withoutHeaderValues } from "../../src/engine/plan-view";
import { readStoredOutput } from "../../src/engine/output";
import { resolveTemplates } from "../../src/engine/templates";
import type { AttemptResult } from "../../src/engine/verdict";
import { sendHttp } from "../../src/tools/http-client";
import { toolFailure } from "../../src/tools/tool";
import { signatureHeader } from "../../src/webhooks/signature";
import { templateContext } from "../execution/template-context";
import type { RunContext } from "../run-context";
import type { RepairRow } from "../storage/replan-table";
import { repairEntry } from "../views/replan-views";

/** What the planner is told about the failed step, the plan and the repairs so far. */
export function plannerRequest(ctx: RunContext, plan: CompiledPlan, row: RepairRow, runId: string) {
  const c = ctx.checkpoint;
  const step = plan.steps[row.stepIndex]!;
  const record = c.steps.get(row.stepIndex)!;
  let params = step.params;
  try {
    const context = templateContext(c, plan, runId, step.refs, ctx.results);
    params = resolveTemplates(step.params, context) as Record<string, unknown>;
  } catch {
    // The failure may be this very template: the planner gets the params as written.
  }
  const completed: Record<string, unknown> = {};
  for (const d of step.deps) {
    const dep = c.steps.get(d)!;
    if (dep.status === "succeeded" && dep.data !== null)
      completed[dep.id] = readStoredOutput(dep.data);
  }
  const document = planDocument(plan, { redact: true });
  return {
    runId,
    n: row.n,
    stepId: step.id,
    attempt: record.attempts,
    error: JSON.parse(row.error) as unknown,
    diagnosis: row.diagnosis,
    step: document.steps[row.stepIndex],
    params: withoutHeaderValues(params),
    ...(record.data !== null && { output: readStoredOutput(record.data) }),
    completed,
    plan: document,
    revision: plan.revision ?? 0,
    replans: c.replans.history().map(repairEntry),
  };
}

/** How long a planner call may take: the plan's `replan.timeoutMs`, else its step timeout. */
export function plannerTimeoutMs(plan: CompiledPlan): number {
  return plan.replan?.timeoutMs ?? plan.config.stepTimeoutMs;
}

/** Calls the planner for repair `row` (its call number `attempt`); never rejects. */
export async function callPlanner(
  ctx: RunContext,
  plan: CompiledPlan,
  row: RepairRow,
  attempt: number,
  runId: string,
  signal: AbortSignal,
): Promise<AttemptResult> {
  const url = plan.replan?.url;
  if (url === undefined) return toolFailure("invalid_data", "the plan names no planner url");
  const env = ctx.replan;
  try {
    const body = JSON.stringify(plannerRequest(ctx, plan, row, runId));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "edgestep-replan",
    };
    const secret = plan.webhook?.secret ?? env.workerSecret;
    if (secret)
      headers["x-edgestep-signature"] = await signatureHeader(
        secret,
        body,
        Math.floor(Date.now() / 1000),
      );
    const stepId = row.stepId;
    return await sendHttp(
      { url, method: "POST", headers, body },
      {
        runId,
        stepId,
        attempt,
        idempotencyKey: `${runId}:${stepId}:replan:${row.n}`,
        timeoutMs: plannerTimeoutMs(plan),
        signal,
        maxOutputBytes: env.maxAnswerBytes,
        maxOutputDepth: env.maxAnswerDepth,
        now: ctx.now(),
      },
      env.fetcher,
      env.checkUrl,
    );
  } catch (err) {
    return toolFailure("network", `the planner call failed: ${(err as Error).message}`);
  }
}
