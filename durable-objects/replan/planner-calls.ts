/**
 * The repairs of one iteration's steps (SPEC 9.2). A step waiting for a repair has a timer on
 * its row (the alarm points at it); when it falls due: after the cooldown a person may answer
 * (mode human), or the planner is called. A call is recorded before it is made, like an
 * attempt, and is in flight in the iteration like one (the iteration's lease keeps the alarm,
 * its timeout bounds it); a call found in flight after a restart counts as `interrupted`. Its
 * outcome is one verdict: the repair applied, a retry under the run's retry policy, or the
 * step failed. So a crash before, during or after the call neither loses nor repeats a repair:
 * the repair and the step's new state are one transaction.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import { cooldownEnd, plannerVerdict } from "../../src/engine/replan";
import { DEFAULT_RETRY } from "../../src/engine/retry";
import { outcomeOf, settle, type Scheduler } from "../../src/engine/scheduler";
import type { AttemptResult } from "../../src/engine/verdict";
import { commitVerdict, repairFailed, repairOpened, repairWaits } from "../execution/step-journal";
import type { RunContext } from "../run-context";
import type { RepairRow } from "../storage/replan-table";
import { callPlanner, plannerTimeoutMs } from "./planner-call";
import { applyAnswer } from "./repair";

interface Completion {
  i: number;
  n: number;
  attempt: number;
  result: AttemptResult;
}

export class PlannerCalls {
  private readonly controllers = new Map<number, AbortController>();
  private completed: Completion[] = [];

  constructor(
    private readonly ctx: RunContext,
    private readonly plan: CompiledPlan,
    private readonly s: Scheduler,
    private readonly runId: string,
    /** Something settled or came back: the iteration loop should look again. */
    private readonly notify: () => void,
  ) {}

  /** Step `i`'s repair is due: a person may answer from now on, or the planner is called. */
  due(i: number, now: number): void {
    const c = this.ctx.checkpoint;
    const step = this.plan.steps[i]!;
    const row = c.replans.openOf(i);
    if (!row) {
      const error = { category: "replan_unavailable" as const, message: "no repair was asked for" };
      commitVerdict(c, step, null, now, { type: "failed", error }, now);
      settle(this.s, i, { type: "failed" });
      return;
    }
    if (row.state === "calling") {
      const message = "the run restarted while the planner call was in flight";
      this.judge(i, row.n, row.attempts, { ok: false, category: "interrupted", message }, now);
      return;
    }
    // The cooldown counts from the latest repair asked: one asked since this was scheduled moves it.
    const gate = cooldownEnd(c.replans.latestAsked(row.n), this.plan.replan?.cooldownMs ?? 0);
    if (row.askedAt === null && gate !== null && gate > now) {
      repairWaits(c, step, row.n, gate, null, now);
      settle(this.s, i, { type: "wait", at: gate, for: "replan" });
    } else if (row.mode === "human") {
      repairOpened(c, step, row.n, now);
      settle(this.s, i, { type: "wait", at: null, for: "replan" });
    } else this.call(i, row, now);
  }

  /** Commits the calls that came back. */
  commitCompleted(): void {
    const batch = this.completed;
    this.completed = [];
    for (const done of batch) this.judge(done.i, done.n, done.attempt, done.result, this.ctx.now());
  }

  /** The run was cancelled: calls in flight are aborted (and end as cancelled). */
  cancel(): void {
    for (const controller of this.controllers.values()) controller.abort();
  }

  private call(i: number, row: RepairRow, now: number): void {
    const attempt = row.attempts + 1;
    this.ctx.checkpoint.replans.calling(row.n, attempt, now);
    const controller = new AbortController();
    this.controllers.set(i, controller);
    const asked = { ...row, attempts: attempt };
    const call = callPlanner(this.ctx, this.plan, asked, attempt, this.runId, controller.signal);
    // Watched like a tool call: one the runtime lost would hold the repair, and the run, for good.
    const timeoutMs = plannerTimeoutMs(this.plan);
    const watched = { stepId: `${row.stepId}:replan:${row.n}`, attempt, startedAt: now, timeoutMs };
    this.ctx.calls.track(watched, call);
    void call.then((result) => {
      this.controllers.delete(i);
      this.completed.push({ i, n: row.n, attempt, result });
      this.notify();
    });
  }

  /** Decides what became of call `attempt` of step `i`'s repair `n`, commits it, then settles it. */
  private judge(i: number, n: number, attempt: number, result: AttemptResult, now: number) {
    const c = this.ctx.checkpoint;
    const step = this.plan.steps[i]!;
    const verdict = plannerVerdict(result, {
      retry: { ...DEFAULT_RETRY, ...this.plan.config.retry },
      counted: attempt,
      halted: this.s.halted,
      cancelled: this.s.cancelled,
      now,
      rand: this.ctx.rand,
    });
    // A run that stops (cancel, fail-fast) takes no repair and retries no call: the step ends cancelled.
    if (this.s.halted) {
      const error = { category: "cancelled" as const, message: "the run stopped" };
      commitVerdict(c, step, null, now, { type: "cancelled", error }, now);
      settle(this.s, i, { type: "cancelled" });
      return;
    }
    switch (verdict.type) {
      case "answer": {
        const outcome = applyAnswer(this.ctx, c.replans.get(n)!, verdict.answer, now, {
          person: false,
        });
        if (outcome.type === "applied") settle(this.s, i, { type: "replanned" });
        else if (outcome.type === "failed") settle(this.s, i, outcomeOf(outcome.verdict));
        return;
      }
      case "retry":
        repairWaits(c, step, n, verdict.at, verdict.error, now);
        settle(this.s, i, { type: "wait", at: verdict.at, for: "replan" });
        return;
      case "failed": {
        const answer = verdict.error.category === "replan_invalid" ? "invalid" : "unavailable";
        settle(this.s, i, outcomeOf(repairFailed(c, step, n, answer, verdict.error, now)));
        return;
      }
      case "cancelled":
        commitVerdict(c, step, null, now, verdict, now);
        settle(this.s, i, { type: "cancelled" });
        return;
      default:
        verdict satisfies never;
    }
  }
}
