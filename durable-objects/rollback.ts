/**
 * Rollback (SPEC 5.6): when a run with `config.rollback` ends `failed`, the `compensate`
 * action of every succeeded step that has one (and of every forEach step with a succeeded
 * item) runs, in reverse order of completion, one at a time. Each is retried under its
 * step's policy (backoff by alarm); a compensation that fails for good is recorded and the
 * others still run.
 */
import type { CompiledPlan, CompiledStep } from "../src/engine/plan";
import type { StepError } from "../src/engine/records";
import { nextAttemptAt, type ErrorCategory } from "../src/engine/retry";
import type { StepResult } from "../src/engine/status";
import { invoke, type InvokeDeps } from "./invoke";
import type { Sql } from "./sql";
import type { RunStore } from "./store";
import { templateContext } from "./template-context";

export interface RollbackDeps extends InvokeDeps {
  db: Sql;
  store: RunStore;
  results: Map<number, StepResult>;
  rand: () => number;
  /** Keeps an alarm set while a compensation is in flight, so a crash resumes the rollback. */
  lease(): Promise<void>;
}

interface CompensationRow {
  seq: number;
  stepIndex: number;
  status: "pending" | "running" | "retrying" | "succeeded" | "failed";
  attempts: number;
  nextAttemptAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  error: string | null;
}

export class Rollback {
  constructor(
    private readonly db: Sql,
    private readonly plan: () => CompiledPlan,
  ) {}

  /**
   * Queues the compensations of the succeeded steps, latest completion first. A `forEach`
   * step that failed (or was cancelled) after some of its items succeeded has done part of
   * its work, so it is compensated too: a deployment that reached two of three targets
   * must be undone.
   */
  enqueue(store: RunStore): void {
    const steps = this.plan().steps;
    const partial = new Set(
      this.db.all<{
        stepIndex: number;
      }>`SELECT DISTINCT step_idx AS stepIndex FROM items WHERE status = 'succeeded'`.map(
        (r) => r.stepIndex,
      ),
    );
    const done = store
      .steps()
      .filter(
        (s) =>
          steps[s.index]!.compensate &&
          (s.status === "succeeded" ||
            ((s.status === "failed" || s.status === "cancelled") && partial.has(s.index))),
      );
    done.sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0) || b.index - a.index);
    // A redriven run can fail again: its compensations queue after the earlier ones.
    const base = this.db.one<{
      next: number;
    }>`SELECT COALESCE(MAX(seq) + 1, 0) AS next FROM compensations`!.next;
    done.forEach((s, k) => {
      this.db
        .run`INSERT INTO compensations (seq, step_idx, status) VALUES (${base + k}, ${s.index}, 'pending')`;
    });
  }

  /** When the next compensation is due (now, or its retry time), or null when none is left. */
  earliestDue(now: number): number | null {
    const next = this.next();
    if (!next) return null;
    return next.status === "retrying" ? next.nextAttemptAt : now;
  }

  /** Runs every compensation that is due, in order; stops at one that must wait for a retry. */
  async run(deps: RollbackDeps): Promise<void> {
    for (let row = this.next(); row; row = this.next()) {
      const now = deps.now();
      if (row.status === "retrying" && (row.nextAttemptAt ?? 0) > now) return;
      const step = this.plan().steps[row.stepIndex]!;
      if (row.status === "running") {
        // The object restarted while this compensation was in flight.
        this.failed(
          deps,
          row,
          step,
          { category: "interrupted", message: "the run restarted during this compensation" },
          now,
        );
        continue;
      }
      await this.attempt(deps, row, step);
    }
  }

  private async attempt(
    deps: RollbackDeps,
    row: CompensationRow,
    step: CompiledStep,
  ): Promise<void> {
    const compensate = step.compensate!;
    const now = deps.now();
    const attempt = row.attempts + 1;
    this.db.run`UPDATE compensations SET status = 'running', attempts = ${attempt},
      started_at = COALESCE(started_at, ${now}) WHERE seq = ${row.seq}`;
    deps.store.event("compensation_started", now, step.id, attempt);
    await deps.lease();
    const undo: CompiledStep = {
      ...step,
      id: `${step.id}:compensate`,
      tool: compensate.tool,
      params: compensate.params,
    };
    const context = templateContext(
      deps.store,
      this.plan(),
      deps.runId,
      compensate.refs,
      deps.results,
    );
    const invocation = invoke(deps, undo, attempt, context, now);
    const result = invocation.type === "failed" ? invocation.result : await invocation.result;
    const end = deps.now();
    const updated = { ...row, attempts: attempt };
    if ("suspend" in result)
      this.failed(
        deps,
        updated,
        step,
        { category: "invalid_data", message: "a compensation cannot wait" },
        end,
      );
    else if (result.ok) {
      this.db
        .run`UPDATE compensations SET status = 'succeeded', ended_at = ${end}, error = NULL WHERE seq = ${row.seq}`;
      deps.store.event("compensation_finished", end, step.id, attempt, { status: "succeeded" });
    } else {
      const error: StepError = {
        category: result.category,
        message: result.message,
        ...(result.status !== undefined && { status: result.status }),
      };
      this.failed(deps, updated, step, error, end, result.retryAfterMs);
    }
  }

  private failed(
    deps: RollbackDeps,
    row: CompensationRow,
    step: CompiledStep,
    error: StepError,
    now: number,
    retryAfterMs?: number,
  ): void {
    const at = nextAttemptAt(
      step.retry,
      Math.max(1, row.attempts),
      error.category as ErrorCategory,
      now,
      deps.rand,
      retryAfterMs,
    );
    const json = JSON.stringify(error);
    if (at !== null) {
      this.db
        .run`UPDATE compensations SET status = 'retrying', next_attempt_at = ${at}, error = ${json} WHERE seq = ${row.seq}`;
      return;
    }
    this.db
      .run`UPDATE compensations SET status = 'failed', ended_at = ${now}, next_attempt_at = NULL, error = ${json}
      WHERE seq = ${row.seq}`;
    deps.store.event("compensation_finished", now, step.id, row.attempts, {
      status: "failed",
      error,
    });
  }

  private next(): CompensationRow | undefined {
    return this.db
      .one<CompensationRow>`SELECT seq, step_idx AS stepIndex, status, attempts, next_attempt_at AS nextAttemptAt,
      started_at AS startedAt, ended_at AS endedAt, error FROM compensations
      WHERE status NOT IN ('succeeded', 'failed') ORDER BY seq LIMIT 1`;
  }

  /** True once compensations were queued: the run's succeeded work is (being) undone. */
  queued(): boolean {
    return this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM compensations`!.n > 0;
  }

  /** `{ state, steps }` for the run's status, or undefined when nothing was compensated. */
  view() {
    const rows = this.db
      .all<CompensationRow>`SELECT seq, step_idx AS stepIndex, status, attempts, started_at AS startedAt,
      ended_at AS endedAt, error FROM compensations ORDER BY seq`;
    if (rows.length === 0) return undefined;
    const steps = this.plan().steps;
    const open = rows.some((r) => r.status !== "succeeded" && r.status !== "failed");
    const failed = rows.some((r) => r.status === "failed");
    return {
      state: open ? "running" : failed ? "failed" : "completed",
      steps: rows.map((r) => ({
        stepId: steps[r.stepIndex]!.id,
        tool: steps[r.stepIndex]!.compensate!.tool,
        status: r.status,
        attempts: r.attempts,
        startedAt: r.startedAt === null ? null : new Date(r.startedAt).toISOString(),
        endedAt: r.endedAt === null ? null : new Date(r.endedAt).toISOString(),
        ...(r.error !== null && { error: JSON.parse(r.error) as StepError }),
      })),
    };
  }
}
