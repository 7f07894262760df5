/**
 * RunStore: every read and write of a run's checkpoint, behind one handle so the iteration,
 * rollback and answers share it. This file holds the run row and the run-level transitions
 * (create, iterate, finish, risk gate, resume, redrive, cancel); the step and attempt rows
 * are StepRows', the plan is StoredPlan's, and the event log is EventLog's.
 */
import type { CompiledPlan } from "../src/engine/plan";
import type { EventRecord, RunRecord, RunStatus, StepError } from "../src/engine/records";
import { EventLog } from "./event-log";
import { migrate } from "./schema";
import { Sql } from "./sql";
import { StepRows } from "./step-rows";
import { StoredPlan } from "./stored-plan";

export class RunStore extends StepRows {
  private readonly storedPlan: StoredPlan;

  /** False until the run is created: a lookup of an unknown id must not write a schema. */
  private ready: boolean;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** MAX_EVENTS_PER_RUN (see EventLog). */
    eventCap: number = Number.POSITIVE_INFINITY,
  ) {
    const db = new Sql(storage.sql);
    super(db, new EventLog(db, eventCap));
    this.storedPlan = new StoredPlan(db);
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
    return this.storedPlan.read();
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
      this.storedPlan.write(plan);
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
    this.storedPlan.remember(plan);
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

  /** Approves the risk gate: the run may start, with `skipIds` skipped by the user. */
  openRiskGate(skipIds: readonly string[], now: number): void {
    this.event("approval_granted", now, null, null, { gate: "risk", skipSteps: skipIds });
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

  // The event log, under the names every writer of the checkpoint already uses.

  event(
    type: string,
    now: number,
    stepId: string | null = null,
    attempt: number | null = null,
    data?: unknown,
  ): void {
    this.log.append(type, now, stepId, attempt, data);
  }

  events(after: number, limit: number): EventRecord[] {
    return this.log.after(after, limit);
  }

  trimEvents(cap?: number): void {
    this.log.trim(cap);
  }
}
