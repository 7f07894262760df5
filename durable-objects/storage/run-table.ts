/**
 * RunTable (owns `run`): the run's one row: its status, iteration counters, the risk gate,
 * and the run-level error.
 */
import type { RunRecord, RunStatus, StepCounts, StepError } from "../../src/engine/records";
import type { Sql } from "./sql";

export class RunTable {
  constructor(
    private readonly db: Sql,
    /** Told after every write of the status (the listing feed sends a new one at once). */
    private readonly statusWritten: () => void = () => {},
  ) {}

  /** The run row (shared until the next write that moves it: frozen). */
  read(): RunRecord | undefined {
    return this.db.memo("run", "run", () => this.readRow());
  }

  private readRow(): RunRecord | undefined {
    const row = this.db.one<
      Omit<RunRecord, "riskGate" | "counts"> & { riskGate: string | null } & StepCounts
    >`SELECT id, owner, status,
      created_at AS createdAt, started_at AS startedAt, ended_at AS endedAt, iterations,
      iteration_budget AS iterationBudget, events_dropped AS eventsDropped, error, base_url AS baseUrl,
      risk_gate AS riskGate, delete_requested_at AS deleteRequestedAt, version, steps_total AS total, steps_succeeded AS succeeded,
      steps_failed AS failed, steps_skipped AS skipped, steps_cancelled AS cancelled,
      steps_running AS running, duration_sum AS durationSum, duration_count AS durationCount FROM run`;
    if (!row) return undefined;
    const { total, succeeded, failed, skipped, cancelled, running, durationSum, durationCount } =
      row;
    return Object.freeze({
      id: row.id,
      owner: row.owner,
      status: row.status,
      createdAt: row.createdAt,
      startedAt: row.startedAt,
      endedAt: row.endedAt,
      iterations: row.iterations,
      iterationBudget: row.iterationBudget,
      riskGate: row.riskGate === null ? null : Object.freeze(JSON.parse(row.riskGate) as string[]),
      baseUrl: row.baseUrl,
      eventsDropped: row.eventsDropped,
      error: row.error,
      deleteRequestedAt: row.deleteRequestedAt,
      version: row.version,
      counts: Object.freeze({
        total,
        succeeded,
        failed,
        skipped,
        cancelled,
        running,
        durationSum,
        durationCount,
      }),
    });
  }

  insert(run: {
    id: string;
    owner: string;
    status: RunStatus;
    createdAt: number;
    iterationBudget: number | null;
    baseUrl: string;
    riskGate: string[] | null;
  }): void {
    const gate = run.riskGate === null ? null : JSON.stringify(run.riskGate);
    this.db
      .run`INSERT INTO run (id, owner, status, created_at, iteration_budget, base_url, risk_gate)
      VALUES (${run.id}, ${run.owner}, ${run.status}, ${run.createdAt}, ${run.iterationBudget},
      ${run.baseUrl}, ${gate})`;
  }

  setStatus(status: RunStatus): void {
    this.db.run`UPDATE run SET status = ${status}`;
    this.statusWritten();
  }

  /** Counts an iteration; the run is running from its first one. */
  beginIteration(iterations: number, now: number): void {
    this.db.run`UPDATE run SET status = 'running', iterations = ${iterations},
      started_at = COALESCE(started_at, ${now})`;
    this.statusWritten();
  }

  finish(status: RunStatus, now: number, error?: StepError): void {
    this.db
      .run`UPDATE run SET status = ${status}, ended_at = ${now}, error = ${error ? JSON.stringify(error) : null}`;
    this.statusWritten();
  }

  /** The risk gate is answered (or the run stopped there): it no longer waits for it. */
  clearRiskGate(): void {
    this.db.run`UPDATE run SET risk_gate = NULL`;
  }

  /** Runs until `budget` iterations (bounded mode pauses there). */
  setIterationBudget(budget: number): void {
    this.db.run`UPDATE run SET iteration_budget = ${budget}`;
  }

  /** Redrive: the run is active again, with `allowance` more iterations than it used. */
  reopen(allowance: number): void {
    this.db
      .run`UPDATE run SET status = 'pending', ended_at = NULL, error = NULL, iteration_budget = iterations + ${allowance}`;
    this.statusWritten();
  }

  /** The run's deletion began (SPEC 8.3): from now on it reads as gone. */
  requestDeletion(now: number): void {
    this.db.run`UPDATE run SET delete_requested_at = COALESCE(delete_requested_at, ${now})`;
  }

  addEventsDropped(n: number): void {
    this.db.run`UPDATE run SET events_dropped = events_dropped + ${n}`;
  }
}
