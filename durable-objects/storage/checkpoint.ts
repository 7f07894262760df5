/**
 * The run's checkpoint: every table of the run's SQLite storage, each behind its one owner,
 * opened on one `Sql` handle, plus the run-level transitions that span several tables
 * (create, redrive, cancel, the risk gate). Only storage/ speaks SQL.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import type { RunRecord } from "../../src/engine/records";
import { redrivenSteps } from "../../src/engine/redrive";
import { AttemptTable } from "./attempt-table";
import { ChangeSignal } from "./change-signal";
import { CallbackTable } from "./callback-table";
import { CompensationTable } from "./compensation-table";
import { DeliveryTable } from "./delivery-table";
import { EventTable } from "./event-table";
import { ItemTable } from "./item-table";
import { ListingOutboxTable } from "./listing-outbox-table";
import { PlanTable } from "./plan-table";
import { ReplanTable } from "./replan-table";
import { RunTable } from "./run-table";
import { migrate, SCHEMA_VERSION, storedSchemaVersion, TRIGGERED_WRITES } from "./schema";
import { Sql } from "./sql";
import { StepTable } from "./step-table";
import { Tombstone } from "./tombstone";

export interface NewRun {
  id: string;
  owner: string;
  plan: CompiledPlan;
  now: number;
  baseUrl: string;
  /** Step ids awaiting the risk gate (SPEC 5.4); empty: the run may start. */
  riskGate: string[];
}

export class Checkpoint {
  readonly run: RunTable;
  readonly plan: PlanTable;
  readonly steps: StepTable;
  readonly attempts: AttemptTable;
  readonly items: ItemTable;
  readonly callbacks: CallbackTable;
  readonly compensations: CompensationTable;
  readonly deliveries: DeliveryTable;
  readonly events: EventTable;
  readonly replans: ReplanTable;
  readonly listing: ListingOutboxTable;
  /** What is left once the run is deleted (SPEC 8.3). */
  readonly tombstone: Tombstone;
  /** True when opening this storage brought it from an older schema version. */
  readonly upgraded: boolean;
  private readonly db: Sql;
  /** Fires after every write: long-polling status readers wait on it (SPEC 6.1). */
  readonly changes = new ChangeSignal();
  /** False until the run is created: a lookup of an unknown id must not write a schema. */
  private exists: boolean;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** MAX_EVENTS_PER_RUN (see EventTable). */
    eventCap: number = Number.POSITIVE_INFINITY,
    /** Told which step's row or items changed (null: possibly any), for views that cache. */
    stepChanged: (index: number | null) => void = () => {},
  ) {
    const db = new Sql(storage.sql, TRIGGERED_WRITES);
    db.onWrite = () => this.changes.notify();
    this.db = db;
    this.run = new RunTable(db, () => this.changes.statusWritten());
    this.plan = new PlanTable(db);
    this.steps = new StepTable(db, stepChanged);
    this.attempts = new AttemptTable(db);
    this.items = new ItemTable(db, stepChanged);
    this.callbacks = new CallbackTable(db);
    this.compensations = new CompensationTable(db);
    this.deliveries = new DeliveryTable(db);
    this.events = new EventTable(db, (n) => this.run.addEventsDropped(n), eventCap);
    this.replans = new ReplanTable(db);
    this.listing = new ListingOutboxTable(db);
    this.tombstone = new Tombstone(storage.kv);
    const version = storedSchemaVersion(db);
    this.exists = version > 0;
    this.upgraded = this.exists && version < SCHEMA_VERSION;
    if (this.exists) migrate(db, version);
  }

  /** Writes the rows held back (Sql.later) now: before a call that must find them stored. */
  flush(): void {
    this.db.flushHeld();
  }

  /** The run row, or undefined when no run was created here. */
  runRecord(): RunRecord | undefined {
    return this.exists ? this.run.read() : undefined;
  }

  /** Stores a new run in one transaction; with a risk gate it waits for approval (SPEC 5.4). */
  create(run: NewRun): void {
    const { plan } = run;
    this.transaction(() => {
      if (!this.exists) migrate(this.db, 0);
      const { mode } = plan.config;
      const gated = run.riskGate.length > 0;
      this.plan.write(plan);
      this.run.insert({
        id: run.id,
        owner: run.owner,
        status: gated ? "waiting" : "pending",
        createdAt: run.now,
        iterationBudget: mode.type === "bounded" ? mode.iterations : null,
        baseUrl: run.baseUrl,
        riskGate: gated ? run.riskGate : null,
      });
      this.steps.insertAll(plan.steps);
    });
    this.exists = true;
    this.plan.remember(plan);
  }

  /**
   * Deletes everything the run stored, its alarm included (`deleteAll()`, compatibility date
   * 2026-02-24 or later), and leaves its tombstone. Both are called in one synchronous turn,
   * so workerd commits them as one write: a crash leaves either the whole run (still marked
   * for deletion, its alarm set to finish the job) or the tombstone, never an empty object
   * whose id could be taken again.
   */
  wipe(now: number): Promise<void> {
    this.db.dropHeld(); // nothing held back may be written after the wipe
    this.events.forget();
    const deleted = this.storage.deleteAll();
    this.db.changed();
    this.tombstone.write(now);
    this.exists = false;
    this.plan.forget();
    this.listing.forget();
    this.changes.notify(); // long-polling readers wake up to a 404
    return deleted;
  }

  /** Approves the risk gate: the run may start, with `skipIds` skipped by the user. */
  openRiskGate(skipIds: readonly string[], now: number): void {
    this.events.append("approval_granted", now, null, null, { gate: "risk", skipSteps: skipIds });
    for (const id of skipIds) {
      this.steps.skippedByUser(id, now);
      this.events.append("step_skipped", now, id, null, { reason: "skipped_by_user" });
    }
    this.run.clearRiskGate();
    this.run.setStatus("pending");
  }

  /** An iteration starts: counted on the run row, with `run_started` the first time. */
  beginIteration(run: RunRecord, now: number): void {
    const iterations = run.iterations + 1;
    this.run.beginIteration(iterations, now);
    if (run.startedAt === null) this.events.append("run_started", now);
    this.events.append("iteration_started", now, null, null, { iteration: iterations });
  }

  /** A paused run continues until `budget` iterations. */
  resume(budget: number, now: number): void {
    this.run.setStatus("running");
    this.run.setIterationBudget(budget);
    this.steps.quotaWaitsDue(now);
    this.events.append("run_resumed", now, null, null, { iterationBudget: budget });
  }

  /**
   * Redrive: failed and cancelled steps, and those skipped because of them, become pending
   * again (redrivenSteps; forEach steps re-run their failed items). Their attempts stay in
   * history; the retry policy counts from here, and the run gets its iteration allowance afresh.
   */
  redrive(now: number): void {
    const plan = this.plan.read();
    const again = redrivenSteps(
      this.steps.views(),
      plan.steps.map((s) => s.deps),
    );
    this.items.redrive();
    this.steps.redrive(again);
    const mode = plan.config.mode;
    this.run.reopen(mode.type === "bounded" ? mode.iterations : mode.maxIterations);
    this.events.append("run_resumed", now, null, null, { redrive: true, steps: again.length });
  }

  /**
   * A repair (SPEC 9.2), in one transaction with the step's state: the plan's new revision,
   * step `index` pending under its new definition (a forEach step's items resolved again),
   * the new steps' rows appended in plan order, and repair `n` settled as `repaired`.
   */
  applyRepair(r: {
    n: number;
    index: number;
    plan: CompiledPlan;
    newStepIds: string[];
    now: number;
  }) {
    const { plan, index } = r;
    const before = this.plan.read().steps.length;
    this.transaction(() => {
      this.plan.replace(plan);
      this.items.forget(index);
      this.steps.redefined(index, plan.steps[index]!.tool);
      this.steps.insertAll(plan.steps.slice(before));
      this.replans.settled(r.n, "repaired", r.now, null, r.newStepIds);
      this.events.append("replan_applied", r.now, plan.steps[index]!.id, null, {
        n: r.n,
        revision: plan.revision ?? 0,
        newStepIds: r.newStepIds,
      });
    });
    this.plan.remember(plan);
  }

  /** One transaction (Sql.transaction): should it throw, its writes are undone. */
  private transaction(body: () => void): void {
    this.db.transaction((f) => this.storage.transactionSync(f), body);
  }

  /** Cancels every step that has not finished, closing its open attempt and callback tokens. */
  cancelUnfinished(now: number): void {
    this.attempts.cancelOpen(now);
    this.steps.cancelUnfinished(now);
    this.items.cancelUnfinished();
    this.callbacks.expireAll();
    this.replans.cancelOpen(now);
    // A run stopped at the risk gate no longer waits for it (and cannot be approved later).
    this.run.clearRiskGate();
  }
}
