/**
 * Rollback (SPEC 5.6): when a run with `config.rollback` ends `failed`, the `compensate`
 * action of every succeeded step that has one (and of every forEach step with a succeeded
 * item) runs, in reverse order of completion, one at a time. Each is retried under its
 * step's policy (backoff by alarm; a `step_retry_scheduled` event with `compensation: true`
 * says why, an interruption by a restart too); a compensation that fails for good is
 * recorded and the others still run.
 */
import { planFeatures, type CompiledStep } from "../../src/engine/plan";
import type { StepError } from "../../src/engine/records";
import { rollbackOrder } from "../../src/engine/rollback-order";
import { attemptVerdict, type FinalVerdict, type QuotaWait } from "../../src/engine/verdict";
import { callTool, invokerOf, prepare, type Prepared } from "../execution/invoke";
import { compensationTicket, type Ticket } from "../execution/tickets";
import { quotaWaitData, retryData } from "../execution/step-journal";
import { templateContext } from "../execution/template-context";
import type { RunContext } from "../run-context";
import type { Checkpoint } from "../storage/checkpoint";
import type { CompensationRow } from "../storage/compensation-table";

const NOT_STORED = {
  maxOutputBytes: Number.POSITIVE_INFINITY,
  maxOutputDepth: Number.POSITIVE_INFINITY,
};

/**
 * Queues the compensations of the succeeded steps, latest completion first (rollbackOrder:
 * dependents first among steps that ended in the same millisecond). A `forEach`
 * step that failed (or was cancelled) after some of its items succeeded has done part of
 * its work, so it is compensated too: a deployment that reached two of three targets
 * must be undone.
 */
export function enqueueRollback(c: Checkpoint): void {
  const steps = c.plan.read().steps;
  const partial = c.items.stepsWithSuccesses();
  const done = c.steps
    .views()
    .filter(
      (s) =>
        steps[s.index]!.compensate &&
        (s.status === "succeeded" ||
          ((s.status === "failed" || s.status === "cancelled") && partial.has(s.index))),
    );
  const deps = steps.map((s) => s.deps);
  c.compensations.enqueue(rollbackOrder(done, deps));
}

/** Runs every compensation that is due, in order; stops at one that must wait for a retry. */
export async function runRollback(ctx: RunContext, runId: string, baseUrl: string | null) {
  const c = ctx.checkpoint;
  for (let row = c.compensations.next(); row; row = c.compensations.next()) {
    const now = ctx.now();
    if (row.status === "retrying" && (row.nextAttemptAt ?? 0) > now) return;
    const step = c.plan.read().steps[row.stepIndex]!;
    if (row.status === "running") {
      // The object restarted while this compensation was in flight.
      const message = "the run restarted during this compensation";
      judge(ctx, row, step, { ok: false, category: "interrupted", message }, now);
      continue;
    }
    await attempt(ctx, runId, baseUrl, row, step);
  }
}

async function attempt(
  ctx: RunContext,
  runId: string,
  baseUrl: string | null,
  row: CompensationRow,
  step: CompiledStep,
): Promise<void> {
  const c = ctx.checkpoint;
  const compensate = step.compensate!;
  const attempt = row.attempts + 1;
  const undo: CompiledStep = {
    ...step,
    id: `${step.id}:compensate`,
    tool: compensate.tool,
    params: compensate.params,
  };
  const plan = c.plan.read();
  const context = templateContext(c, plan, runId, compensate.refs, ctx.results);
  const invoker = invokerOf(ctx, runId, baseUrl);
  const prepared = prepare(invoker, undo, context);
  // Its destination admits it first (SPEC 10): a wait here is not an attempt.
  const admitted =
    prepared.type === "failed"
      ? { lease: null }
      : await admit(ctx, step, prepared, compensationTicket(row.seq, attempt));
  const now = ctx.now();
  c.compensations.attemptStarted(row.seq, attempt, now);
  c.events.append("compensation_started", now, step.id, attempt);
  await ctx.alarm.renewLease();
  let result = prepared.type === "failed" ? prepared.result : undefined;
  if (prepared.type === "ready") {
    result = await callTool(invoker, undo, prepared, attempt, now).result;
    ctx.gate.ended(undo.tool, prepared.params, admitted.lease, result, ctx.now());
  }
  judge(ctx, { ...row, attempts: attempt }, step, result!, ctx.now());
}

/** Waits (in memory: compensations run one at a time) until the compensation's destination admits it. */
async function admit(ctx: RunContext, step: CompiledStep, prepared: Prepared, ticket: Ticket) {
  const tool = step.compensate!.tool;
  const params = prepared.params;
  const first = ctx.gate.admit(tool, params, ticket, ctx.now());
  if (!(first instanceof Promise) && first.type === "go") return first;
  const onWait = (wait: QuotaWait) =>
    ctx.checkpoint.events.append(
      "quota_wait",
      ctx.now(),
      step.id,
      null,
      quotaWaitData(wait, { compensation: true }),
    );
  await ctx.alarm.renewLease();
  return (await ctx.gate.admitWaiting(first, tool, params, ticket, onWait, () => false))!;
}

function judge(
  ctx: RunContext,
  row: CompensationRow,
  step: CompiledStep,
  result: Parameters<typeof attemptVerdict>[0],
  now: number,
): void {
  const verdict = attemptVerdict(result, {
    retry: step.retry,
    counted: Math.max(1, row.attempts),
    halted: false,
    cancelled: false,
    // A compensation's output is not stored, so no output limit applies to it.
    output: NOT_STORED,
    item: false,
    noSuspend: "a compensation cannot wait",
    now,
    rand: ctx.rand,
  });
  commit(ctx.checkpoint, row, step, verdict, now);
}

function commit(
  c: Checkpoint,
  row: CompensationRow,
  step: CompiledStep,
  verdict: FinalVerdict,
  now: number,
): void {
  switch (verdict.type) {
    case "succeeded":
      c.compensations.succeeded(row.seq, now);
      c.events.append("compensation_finished", now, step.id, row.attempts, { status: "succeeded" });
      return;
    case "retry":
      c.compensations.retrying(row.seq, verdict.at, verdict.error);
      c.events.append(
        "step_retry_scheduled",
        now,
        step.id,
        row.attempts,
        retryData(verdict.error, verdict.at, { compensation: true }),
      );
      return;
    case "failed":
    case "cancelled":
      failed(c, row, step, verdict.error, now);
      return;
    default:
      verdict satisfies never;
  }
}

function failed(
  c: Checkpoint,
  row: CompensationRow,
  step: CompiledStep,
  error: StepError,
  now: number,
) {
  c.compensations.failed(row.seq, now, error);
  c.events.append("compensation_finished", now, step.id, row.attempts, { status: "failed", error });
}

/** `{ state, steps }` for the run's status, or undefined when nothing was compensated. */
export function rollbackView(c: Checkpoint) {
  const plan = c.plan.read();
  if (!planFeatures(plan).compensations) return undefined; // nothing can have been compensated
  const rows = c.compensations.all();
  if (rows.length === 0) return undefined;
  const steps = plan.steps;
  const open = rows.some((r) => r.status !== "succeeded" && r.status !== "failed");
  const anyFailed = rows.some((r) => r.status === "failed");
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return {
    state: open ? "running" : anyFailed ? "failed" : "completed",
    steps: rows.map((r) => ({
      stepId: steps[r.stepIndex]!.id,
      tool: steps[r.stepIndex]!.compensate!.tool,
      status: r.status,
      attempts: r.attempts,
      startedAt: iso(r.startedAt),
      endedAt: iso(r.endedAt),
      ...(r.error !== null && { error: JSON.parse(r.error) as StepError }),
    })),
  };
}
