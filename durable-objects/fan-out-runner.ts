/**
 * Runs the items of one `forEach` step inside an iteration: resolves the item list once
 * (stored one row per item), starts at most `maxConcurrency` item attempts, commits each
 * item outcome, and says when the step is done. Each item's output is bounded by
 * MAX_OUTPUT_BYTES when stored; item results are read back only once, to assemble the step's
 * `data`, after their total was checked in SQL.
 */
import {
  createFanOut,
  decideItems,
  settleItem,
  type FanOut,
  type FanOutNext,
  type ItemSnapshot,
} from "../src/engine/fan-out";
import { storedOutput } from "../src/engine/output";
import type { CompiledStep } from "../src/engine/plan";
import type { StepError } from "../src/engine/records";
import { nextAttemptAt, type ErrorCategory } from "../src/engine/retry";
import {
  TemplateUnresolvedError,
  resolveTemplates,
  type TemplateContext,
} from "../src/engine/templates";
import { invoke, type InvokeDeps } from "./invoke";
import type { Sql } from "./sql";
import type { RunStore } from "./store";

export interface FanOutDeps extends InvokeDeps {
  db: Sql;
  store: RunStore;
  rand: () => number;
  /** Something settled: the iteration loop should look again. */
  notify(): void;
  /** True once the run stops starting new work (fail-fast, cancel). */
  halted(): boolean;
}

interface ItemRow extends ItemSnapshot {
  attempts: number;
  retryBase: number;
}

export class FanOutRunner {
  private f!: FanOut;
  private attempts: number[] = [];
  private retryBase: number[] = [];
  private readonly controllers = new Map<number, AbortController>();

  constructor(
    private readonly deps: FanOutDeps,
    private readonly step: CompiledStep,
    private readonly context: TemplateContext,
  ) {}

  /** Loads (or, the first time, resolves and stores) the items. Returns an error when `forEach` is not an array. */
  begin(now: number): StepError | null {
    const { db } = this.deps;
    const i = this.step.index;
    let rows = db.all<ItemRow>`SELECT status, next_attempt_at AS nextAttemptAt, attempts, retry_base AS retryBase FROM items
      WHERE step_idx = ${i} ORDER BY item_index`;
    if (rows.length === 0) {
      let list: unknown;
      try {
        list = resolveTemplates(this.step.forEach, this.context);
      } catch (err) {
        const category =
          err instanceof TemplateUnresolvedError ? "template_unresolved" : "invalid_data";
        return { category, message: (err as Error).message };
      }
      if (!Array.isArray(list)) {
        return {
          category: "invalid_data",
          message: `forEach resolved to ${typeof list}, not an array`,
        };
      }
      list.forEach((item, k) => {
        db.run`INSERT INTO items (step_idx, item_index, item, status) VALUES (${i}, ${k}, ${JSON.stringify(item ?? null)}, 'pending')`;
      });
      rows = list.map(() => ({
        status: "pending",
        nextAttemptAt: null,
        attempts: 0,
        retryBase: 0,
      }));
    }
    this.attempts = rows.map((r) => r.attempts);
    this.retryBase = rows.map((r) => r.retryBase);
    this.f = createFanOut(
      rows,
      this.step.maxConcurrency ?? this.deps.store.plan().config.maxParallel,
    );
    for (const k of this.f.interrupted) {
      this.fail(
        k,
        { category: "interrupted", message: "the run restarted while this item was in flight" },
        now,
      );
    }
    return null;
  }

  /** Starts what may start; says what the step does next. Once the run halts, nothing new starts. */
  pump(now: number): FanOutNext | { type: "halted" } {
    if (this.deps.halted())
      return this.f.running > 0 ? { type: "await", wakeAt: null } : { type: "halted" };
    const { start, next } = decideItems(this.f, now);
    for (const k of start) this.startItem(k, now);
    return next;
  }

  /** The run halted: items that never finished are cancelled. */
  cancelRemaining(): void {
    this.deps.db.run`UPDATE items SET status = 'cancelled', next_attempt_at = NULL
      WHERE step_idx = ${this.step.index} AND status IN ('pending', 'retrying', 'running')`;
  }

  /**
   * The step's output would be larger than `max` bytes: the error, else null. Counted in SQL
   * (stored item JSON plus brackets and commas: exactly the assembled array's size), so an
   * oversize total never loads the rows.
   */
  outputTooLarge(max: number): StepError | null {
    const row = this.deps.db.one<{ n: number; bytes: number | null }>`SELECT COUNT(*) AS n,
      SUM(COALESCE(LENGTH(CAST(data AS BLOB)), 4)) AS bytes FROM items WHERE step_idx = ${this.step.index}`;
    const n = row?.n ?? 0;
    const bytes = (row?.bytes ?? 0) + Math.max(n - 1, 0) + 2;
    if (bytes <= max) return null;
    return {
      category: "output_too_large",
      message: `the ${n} items' outputs total ${bytes} bytes, more than MAX_OUTPUT_BYTES (${max})`,
    };
  }

  /** Item data in order, for the step's result. Call it only once `outputTooLarge` says null. */
  data(): unknown[] {
    return this.deps.db.all<{
      data: string | null;
    }>`SELECT data FROM items WHERE step_idx = ${this.step.index} ORDER BY item_index`.map((r) =>
      r.data === null ? null : (JSON.parse(r.data) as unknown),
    );
  }

  /** The first failed item's error, for the step's. */
  firstError(): StepError | undefined {
    const row = this.deps.db.one<{
      error: string;
    }>`SELECT error FROM items WHERE step_idx = ${this.step.index}
      AND status IN ('failed', 'cancelled') ORDER BY item_index LIMIT 1`;
    return row ? (JSON.parse(row.error) as StepError) : undefined;
  }

  totalAttempts(): number {
    return this.attempts.reduce((a, b) => a + b, 0);
  }

  cancel(): void {
    for (const c of this.controllers.values()) c.abort();
  }

  private startItem(k: number, now: number): void {
    const { db } = this.deps;
    const i = this.step.index;
    const attempt = ++this.attempts[k]!;
    db.run`UPDATE items SET status = 'running', attempts = ${attempt}, next_attempt_at = NULL
      WHERE step_idx = ${i} AND item_index = ${k}`;
    db.run`INSERT INTO attempts (step_idx, item_index, attempt, started_at) VALUES (${i}, ${k}, ${attempt}, ${now})`;
    db.run`UPDATE steps SET attempts = attempts + 1 WHERE idx = ${i}`; // the status counts item attempts live
    const item = JSON.parse(
      db.one<{ item: string }>`SELECT item FROM items WHERE step_idx = ${i} AND item_index = ${k}`!
        .item,
    ) as unknown;
    const invocation = invoke(
      this.deps,
      this.step,
      attempt,
      { ...this.context, item, index: k },
      now,
      k,
    );
    if (invocation.type === "failed") {
      const r = invocation.result;
      if ("ok" in r && !r.ok) this.fail(k, { category: r.category, message: r.message }, now);
      this.deps.notify(); // settled without a promise: the iteration must look again
      return;
    }
    this.controllers.set(k, invocation.controller);
    void invocation.result.then((result) => {
      this.controllers.delete(k);
      const t = Date.now();
      if ("suspend" in result)
        this.fail(k, { category: "invalid_data", message: "this tool cannot run per item" }, t);
      else if (result.ok) this.succeed(k, attempt, result.data, result.status ?? null, t);
      else {
        const { category, message, status, retryAfterMs } = result;
        this.fail(
          k,
          { category, message, ...(status !== undefined && { status }) },
          t,
          retryAfterMs,
        );
      }
      this.deps.notify();
    });
  }

  /** Commits an item's output, bounded like a step's: a larger one fails the item as `output_too_large`. */
  private succeed(
    k: number,
    attempt: number,
    data: unknown,
    status: number | null,
    now: number,
  ): void {
    const { db } = this.deps;
    const i = this.step.index;
    const stored = storedOutput(data, this.deps, true);
    if (!stored.ok) return this.fail(k, stored.error, now);
    db.run`UPDATE items SET status = 'succeeded', data = ${stored.json} WHERE step_idx = ${i} AND item_index = ${k}`;
    db.run`UPDATE attempts SET ended_at = ${now}, http_status = ${status} WHERE step_idx = ${i} AND item_index = ${k} AND attempt = ${attempt}`;
    settleItem(this.f, k, { type: "succeeded" });
  }

  /** Commits a failed item attempt: a retry under the step's policy, or the item fails. */
  private fail(k: number, error: StepError, now: number, retryAfterMs?: number): void {
    const { db } = this.deps;
    const i = this.step.index;
    const attempt = this.attempts[k]!;
    db.run`UPDATE attempts SET ended_at = ${now}, category = ${error.category}, http_status = ${error.status ?? null},
      message = ${error.message} WHERE step_idx = ${i} AND item_index = ${k} AND attempt = ${attempt}`;
    const cancelled = error.category === "cancelled";
    const at =
      cancelled || this.deps.halted()
        ? null
        : nextAttemptAt(
            this.step.retry,
            attempt - this.retryBase[k]!,
            error.category as ErrorCategory,
            now,
            this.deps.rand,
            retryAfterMs,
          );
    if (at !== null) {
      db.run`UPDATE items SET status = 'retrying', next_attempt_at = ${at}, error = ${JSON.stringify(error)}
        WHERE step_idx = ${i} AND item_index = ${k}`;
      settleItem(this.f, k, { type: "retry", at });
    } else {
      db.run`UPDATE items SET status = ${cancelled ? "cancelled" : "failed"}, error = ${JSON.stringify(error)}
        WHERE step_idx = ${i} AND item_index = ${k}`;
      settleItem(this.f, k, { type: cancelled ? "cancelled" : "failed" });
    }
  }
}
