/**
 * RunStore: every read and write of a run's checkpoint. Completing a step writes only
 * that step's rows (its step row, its attempt row, its events), never the whole plan.
 */
import type { CompiledPlan } from "../src/engine/plan";
import type {
  AttemptRecord,
  EventRecord,
  RunRecord,
  RunStatus,
  StepError,
  StepRecord,
} from "../src/engine/records";
import type { SkipReason, StepSnapshot, StepStatus } from "../src/engine/scheduler";
import { migrate } from "./schema";
import { Sql, raw } from "./sql";

const STEP_COLUMNS =
  raw(`idx AS "index", id, tool, status, reason, attempts, started_at AS startedAt,
  ended_at AS endedAt, next_attempt_at AS nextAttemptAt, waiting_for AS waitingFor, data, error,
  http_status AS httpStatus, execution_ms AS executionMs`);

/** Characters per stored plan part: at most 1 MiB of UTF-8, well under the 2 MB value limit. */
const PLAN_PART_CHARS = 256 * 1024;

/** Cuts `text` into parts of at most `size` characters, never between a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--; // keep the pair together
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

export class RunStore {
  private readonly db: Sql;
  private cachedPlan: CompiledPlan | undefined;

  /** False until the run is created: a lookup of an unknown id must not write a schema. */
  private ready: boolean;

  /** Events written since the log was last trimmed to `eventCap`. */
  private sinceTrim = 0;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** MAX_EVENTS_PER_RUN: the log is trimmed back to it at every commit point (trimEvents), and
     * while a long iteration writes, each time a tenth of it was written again. */
    private readonly eventCap: number = Number.POSITIVE_INFINITY,
  ) {
    this.db = new Sql(storage.sql);
    this.ready =
      this.db.one`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'meta'` !==
      undefined;
    if (this.ready) migrate(this.db);
  }

  run(): RunRecord | undefined {
    if (!this.ready) return undefined;
    const row = this.db.one<
      Omit<RunRecord, "riskGate"> & { riskGate: string | null }
    >`SELECT id, owner, status,
      created_at AS createdAt, started_at AS startedAt, ended_at AS endedAt, iterations,
      iteration_budget AS iterationBudget, events_dropped AS eventsDropped, error, base_url AS baseUrl,
      risk_gate AS riskGate FROM run`;
    return (
      row && {
        ...row,
        riskGate: row.riskGate === null ? null : (JSON.parse(row.riskGate) as string[]),
      }
    );
  }

  plan(): CompiledPlan {
    if (!this.cachedPlan) {
      const parts = this.db.all<{ part: string }>`SELECT part FROM plan_parts ORDER BY seq`;
      if (parts.length === 0) throw new Error("no run stored");
      this.cachedPlan = JSON.parse(parts.map((p) => p.part).join("")) as CompiledPlan;
    }
    return this.cachedPlan;
  }

  /** Stores a new run; with `riskGate` it waits for approval before anything starts (SPEC 5.4). */
  createRun(
    id: string,
    owner: string,
    plan: CompiledPlan,
    now: number,
    baseUrl: string,
    riskGate: string[],
  ): void {
    this.storage.transactionSync(() => {
      migrate(this.db);
      const { mode } = plan.config;
      const budget = mode.type === "bounded" ? mode.iterations : null;
      const gate = riskGate.length > 0 ? JSON.stringify(riskGate) : null;
      splitText(JSON.stringify(plan), PLAN_PART_CHARS).forEach((part, seq) => {
        this.db.run`INSERT INTO plan_parts (seq, part) VALUES (${seq}, ${part})`;
      });
      this.db
        .run`INSERT INTO run (id, owner, status, created_at, iteration_budget, base_url, risk_gate)
        VALUES (${id}, ${owner}, ${gate ? "waiting" : "pending"}, ${now}, ${budget},
        ${baseUrl}, ${gate})`;
      for (const step of plan.steps) {
        this.db
          .run`INSERT INTO steps (idx, id, tool, status) VALUES (${step.index}, ${step.id}, ${step.tool}, 'pending')`;
      }
    });
    this.ready = true;
    this.cachedPlan = plan;
  }

  setRunStatus(status: RunStatus): void {
    this.db.run`UPDATE run SET status = ${status}`;
  }

  beginIteration(now: number): number {
    const run = this.run()!;
    const iterations = run.iterations + 1;
    this.db.run`UPDATE run SET status = 'running', iterations = ${iterations},
      started_at = COALESCE(started_at, ${now})`;
    if (run.startedAt === null) this.event("run_started", now);
    this.event("iteration_started", now, null, null, { iteration: iterations });
    return iterations;
  }

  finishRun(status: RunStatus, now: number, error?: StepError): void {
    this.db
      .run`UPDATE run SET status = ${status}, ended_at = ${now}, error = ${error ? JSON.stringify(error) : null}`;
  }

  /** What the scheduler needs, one row per step in plan order. */
  snapshots(): (StepSnapshot & { attempts: number; retryBase: number })[] {
    return this.db.all<StepSnapshot & { attempts: number; retryBase: number }>`SELECT status,
      next_attempt_at AS nextAttemptAt, attempts, retry_base AS retryBase FROM steps ORDER BY idx`;
  }

  steps(): StepRecord[] {
    return this.db.all<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps ORDER BY idx`;
  }

  step(index: number): StepRecord | undefined {
    return this.db.one<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps WHERE idx = ${index}`;
  }

  stepIndex(id: string): number | undefined {
    return this.db.one<{ idx: number }>`SELECT idx FROM steps WHERE id = ${id}`?.idx;
  }

  attempts(index: number): AttemptRecord[] {
    return this.db
      .all<AttemptRecord>`SELECT attempt, started_at AS startedAt, ended_at AS endedAt, category,
      http_status AS httpStatus, message, item_index AS itemIndex FROM attempts WHERE step_idx = ${index}
      ORDER BY item_index, attempt`;
  }

  /** Recorded before the tool is called (SPEC 5.5). */
  startAttempt(index: number, stepId: string, attempt: number, now: number): void {
    this.db.run`UPDATE steps SET status = 'running', attempts = ${attempt}, next_attempt_at = NULL,
      started_at = COALESCE(started_at, ${now}) WHERE idx = ${index}`;
    this.db
      .run`INSERT INTO attempts (step_idx, attempt, started_at) VALUES (${index}, ${attempt}, ${now})`;
    this.event("step_started", now, stepId, attempt);
  }

  /** Item progress of forEach steps (one step, or all), by step index. */
  itemCounts(
    index?: number,
  ): Map<number, { total: number; succeeded: number; failed: number; running: number }> {
    const rows = this.db.all<{
      i: number;
      total: number;
      succeeded: number;
      failed: number;
      running: number;
    }>`SELECT
      step_idx AS i, COUNT(*) AS total, SUM(status = 'succeeded') AS succeeded,
      SUM(status IN ('failed', 'cancelled')) AS failed, SUM(status = 'running') AS running
      FROM items WHERE ${index ?? null} IS NULL OR step_idx = ${index ?? null} GROUP BY step_idx`;
    return new Map(rows.map(({ i, ...counts }) => [i, counts]));
  }

  /** A forEach step starts: its attempts are its items'. */
  fanOutStarted(index: number, stepId: string, now: number): void {
    this.db
      .run`UPDATE steps SET status = 'running', started_at = ${now}, next_attempt_at = NULL WHERE idx = ${index}`;
    this.event("step_started", now, stepId, null, { forEach: true });
  }

  /** A forEach step whose items wait for retries runs them: the step is running again. */
  fanOutResumed(index: number): void {
    this.db.run`UPDATE steps SET status = 'running', next_attempt_at = NULL WHERE idx = ${index}`;
  }

  setAttempts(index: number, attempts: number): void {
    this.db.run`UPDATE steps SET attempts = ${attempts} WHERE idx = ${index}`;
  }

  endAttempt(
    index: number,
    attempt: number,
    now: number,
    error?: StepError,
    httpStatus?: number | null,
  ): void {
    this.db.run`UPDATE attempts SET ended_at = ${now}, category = ${error?.category ?? null},
      http_status = ${error?.status ?? httpStatus ?? null}, message = ${error?.message ?? null}
      WHERE step_idx = ${index} AND item_index = -1 AND attempt = ${attempt}`;
  }

  stepSucceeded(
    index: number,
    stepId: string,
    attempt: number,
    data: string,
    httpStatus: number | null,
    executionMs: number,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'succeeded', ended_at = ${now}, data = ${data}, error = NULL,
      waiting_for = NULL, next_attempt_at = NULL,
      http_status = ${httpStatus}, execution_ms = ${executionMs} WHERE idx = ${index}`;
    this.endAttempt(index, attempt, now, undefined, httpStatus);
    this.event("step_succeeded", now, stepId, attempt, { executionMs });
  }

  stepFailed(
    index: number,
    stepId: string,
    attempt: number | null,
    error: StepError,
    now: number,
  ): void {
    this.db.run`UPDATE steps SET status = 'failed', ended_at = ${now}, next_attempt_at = NULL,
      error = ${JSON.stringify(error)}, http_status = ${error.status ?? null} WHERE idx = ${index}`;
    this.event("step_failed", now, stepId, attempt, error);
  }

  stepRetrying(
    index: number,
    stepId: string,
    attempt: number,
    error: StepError,
    at: number,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'retrying', next_attempt_at = ${at}, error = ${JSON.stringify(error)},
      http_status = ${error.status ?? null} WHERE idx = ${index}`;
    this.event("step_retry_scheduled", now, stepId, attempt, {
      ...error,
      nextAttemptAt: new Date(at).toISOString(),
    });
  }

  /** The attempt suspends durably until `until` (the row is the timer; the alarm points at it). */
  stepWaiting(
    index: number,
    stepId: string,
    attempt: number,
    waitingFor: string,
    until: number | null,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'waiting', waiting_for = ${waitingFor}, next_attempt_at = ${until}
      WHERE idx = ${index}`;
    this.event("step_waiting", now, stepId, attempt, {
      waitingFor,
      ...(until !== null && { until: new Date(until).toISOString() }),
    });
  }

  /**
   * True when some step waits for an approval or a callback and nothing else can move the
   * run on: no step is in flight, scheduled for a retry or sleeping on a timer. (Pending
   * steps are then blocked behind the answers; the caller knows that none is ready now.)
   */
  onlyWaitingForAnswers(): boolean {
    const row = this.db.one<{ busy: number | null; waiting: number | null }>`SELECT
      SUM(status IN ('running', 'retrying') OR (status = 'waiting' AND COALESCE(waiting_for, '') NOT IN ('approval', 'callback'))) AS busy,
      SUM(status = 'waiting' AND waiting_for IN ('approval', 'callback')) AS waiting FROM steps`!;
    return (row.waiting ?? 0) > 0 && (row.busy ?? 0) === 0;
  }

  /** Steps waiting for an approval, by id. */
  waitingForApproval(): string[] {
    return this.db.all<{
      id: string;
    }>`SELECT id FROM steps WHERE status = 'waiting' AND waiting_for = 'approval'
      ORDER BY idx`.map((r) => r.id);
  }

  stepEnded(
    index: number,
    stepId: string,
    status: Extract<StepStatus, "skipped" | "cancelled">,
    reason: SkipReason | null,
    now: number,
  ): void {
    this.db.run`UPDATE steps SET status = ${status}, reason = ${reason}, ended_at = ${now},
      next_attempt_at = NULL WHERE idx = ${index}`;
    if (status === "skipped") this.event("step_skipped", now, stepId, null, { reason });
  }

  /** Answers the risk gate: the run may start, with `skipIds` skipped by the user. */
  openRiskGate(skipIds: readonly string[], now: number): void {
    for (const id of skipIds) {
      this.db
        .run`UPDATE steps SET status = 'skipped', reason = 'skipped_by_user', ended_at = ${now} WHERE id = ${id}`;
      this.event("step_skipped", now, id, null, { reason: "skipped_by_user" });
    }
    this.db.run`UPDATE run SET risk_gate = NULL, status = 'pending'`;
  }

  /** A paused run continues until `budget` iterations. */
  resume(budget: number, now: number): void {
    this.db.run`UPDATE run SET status = 'running', iteration_budget = ${budget}`;
    this.event("run_resumed", now, null, null, { iterationBudget: budget });
  }

  /**
   * Redrive: failed steps, and those skipped or cancelled because of a failure, become
   * pending again. Their attempts stay in history; the retry policy counts from here.
   */
  redrive(now: number): void {
    const steps = this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM steps WHERE status = 'failed'
      OR status = 'cancelled' OR (status = 'skipped' AND reason IN ('dependency_failed', 'dependency_skipped'))`!
      .n;
    // forEach steps re-run their failed and cancelled items; succeeded items are kept.
    this.db
      .run`UPDATE items SET status = 'pending', next_attempt_at = NULL, error = NULL, retry_base = attempts
      WHERE status IN ('failed', 'cancelled') AND step_idx IN (SELECT idx FROM steps WHERE status IN ('failed', 'cancelled'))`;
    this.db
      .run`UPDATE steps SET status = 'pending', reason = NULL, started_at = NULL, ended_at = NULL,
      next_attempt_at = NULL, waiting_for = NULL, error = NULL, http_status = NULL, retry_base = attempts
      WHERE status = 'failed' OR status = 'cancelled'
        OR (status = 'skipped' AND reason IN ('dependency_failed', 'dependency_skipped'))`;
    // The redriven run gets its iteration allowance afresh (iterations used stay counted).
    const mode = this.plan().config.mode;
    const allowance = mode.type === "bounded" ? mode.iterations : mode.maxIterations;
    this.db
      .run`UPDATE run SET status = 'pending', ended_at = NULL, error = NULL, iteration_budget = iterations + ${allowance}`;
    this.event("run_resumed", now, null, null, { redrive: true, steps });
  }

  /** Keeps at most `cap` events, dropping the oldest; the count dropped is kept on the run. */
  trimEvents(cap = this.eventCap): void {
    this.sinceTrim = 0;
    if (!Number.isFinite(cap)) return;
    const row = this.db.one<{
      first: number | null;
      last: number | null;
    }>`SELECT MIN(seq) AS first, MAX(seq) AS last FROM events`!;
    if (row.first === null || row.last === null || row.last - row.first + 1 <= cap) return;
    const below = row.last - cap + 1;
    const dropped = this.db.one<{
      n: number;
    }>`SELECT COUNT(*) AS n FROM events WHERE seq < ${below}`!.n;
    this.db.run`DELETE FROM events WHERE seq < ${below}`;
    this.db.run`UPDATE run SET events_dropped = events_dropped + ${dropped}`;
  }

  /** Cancels every step that has not finished, closing its open attempt. */
  cancelUnfinished(now: number): void {
    this.db
      .run`UPDATE attempts SET ended_at = ${now}, category = 'cancelled', message = 'the run was cancelled'
      WHERE ended_at IS NULL`;
    this.db.run`UPDATE steps SET status = 'cancelled', ended_at = ${now}, next_attempt_at = NULL
      WHERE status NOT IN ('succeeded', 'failed', 'skipped', 'cancelled')`;
    this.db
      .run`UPDATE items SET status = 'cancelled', next_attempt_at = NULL WHERE status IN ('pending', 'running', 'retrying')`;
    this.db.run`UPDATE callbacks SET state = 'expired' WHERE state IN ('open', 'answered')`;
    // A run stopped at the risk gate no longer waits for it (and cannot be approved later).
    this.db.run`UPDATE run SET risk_gate = NULL`;
  }

  /** The earliest time a stored row is due (a scheduled retry or a timer), or null. */
  earliestDue(): number | null {
    return this.db.one<{ at: number | null }>`SELECT MIN(next_attempt_at) AS at FROM steps
      WHERE next_attempt_at IS NOT NULL`!.at;
  }

  event(
    type: string,
    now: number,
    stepId: string | null = null,
    attempt: number | null = null,
    data?: unknown,
  ): void {
    this.db.run`INSERT INTO events (type, at, step_id, attempt, data)
      VALUES (${type}, ${now}, ${stepId}, ${attempt}, ${data === undefined ? null : JSON.stringify(data)})`;
    if (++this.sinceTrim >= Math.max(1, Math.floor(this.eventCap / 10))) this.trimEvents();
  }

  events(after: number, limit: number): EventRecord[] {
    return this.db
      .all<EventRecord>`SELECT seq, type, at, step_id AS stepId, attempt, data FROM events
      WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`;
  }
}
