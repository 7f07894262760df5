/**
 * The run's lifecycle requests: create, look up, cancel, resume, redrive, delete (SPEC 4, 7,
 * 8.3). Each asks a check of run-controls.ts or deletion.ts, commits the change through the
 * checkpoint, and ends with the object's `rearm()`; work made ready starts at once (`wake()`).
 */
import { riskGateSteps } from "../../src/engine/approval";
import type { CompiledPlan } from "../../src/engine/plan";
import type { RunRecord } from "../../src/engine/records";
import { atMost } from "../at-most";
import type { DueWork } from "../execution/due-work";
import { INDEX_WAIT_MS, type IndexFeed } from "../listing/index-feed";
import type { RunContext } from "../run-context";
import { checkDelete, deleteRun, isDeleted, type DeletionDeps } from "./deletion";
import * as controls from "./run-controls";

export interface LifecycleDeps {
  work: RunContext;
  feed: IndexFeed;
  deletion: DeletionDeps;
  due: DueWork;
  owned(owner: string): RunRecord | undefined;
  rearm(wake?: number | null): Promise<void>;
  wake(): void;
  beside(work: Promise<void>): void;
}

export class RunLifecycle {
  constructor(private readonly d: LifecycleDeps) {}

  private get checkpoint() {
    return this.d.work.checkpoint;
  }

  /**
   * Stores a new run and arms its first iteration (or waits at the risk gate). Idempotent.
   * The run is in its owner's listing before this answers (SPEC 8.2); if the index fails or
   * takes more than 2 s, the run is created all the same and the outbox lists it later.
   */
  async create(
    runId: string,
    owner: string,
    plan: CompiledPlan,
    baseUrl: string,
  ): Promise<controls.CreateOutcome> {
    const { checkpoint } = this;
    if (isDeleted(checkpoint)) return { deleted: true };
    const existing = checkpoint.runRecord();
    if (existing) return { created: false, status: existing.status };
    const now = this.d.work.now();
    const riskGate = riskGateSteps(plan);
    checkpoint.create({ id: runId, owner, plan, now, baseUrl, riskGate });
    if (riskGate.length > 0) {
      const data = { gate: "risk", stepIds: riskGate };
      checkpoint.events.append("approval_requested", now, null, null, data);
      this.d.work.statusChanged("waiting", now);
    }
    const wake = riskGate.length > 0 ? null : now;
    // The alarm is set in this same turn, so the run and its alarm commit together: after a
    // crash from here on, the alarm still starts the run and sends its listing entry.
    await this.d.work.alarm.rearm(wake);
    // The run starts before its entry is published: its first calls never wait for the
    // owner's index (up to INDEX_WAIT_MS when it is slow), and the entry it publishes already
    // says `running`, instead of `pending` followed by a second update a moment later. (The
    // iteration marks the run running in its first microtask, before `publish` reads it.)
    if (wake !== null) this.d.wake();
    await this.d.feed.publish();
    // Not `wake` again: the iteration has consumed it, and stored anew it would outlive it.
    await this.d.rearm();
    return { created: true, status: wake === null ? "waiting" : "pending" };
  }

  /**
   * What this id holds for `owner`: its run's status, a deleted run (whose Idempotency-Key
   * moves on to a later generation), or nothing. Lets a retried idempotent POST find its run
   * without spending rate limit.
   */
  lookup(owner: string): controls.RunLookup {
    if (isDeleted(this.checkpoint))
      return {
        type: "deleted",
        latestGeneration: this.checkpoint.tombstone.read()?.latestGeneration ?? 0,
      };
    const run = this.d.owned(owner);
    return run ? { type: "run", status: run.status } : { type: "none" };
  }

  /** `DELETE /v1/runs/:id` (SPEC 8.3): a final run is deleted now (see deletion.ts). */
  async deleteRun(owner: string): Promise<controls.ControlOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    const refused = checkDelete(run, this.checkpoint, this.d.work.now());
    if (refused) return refused;
    // The run reads as gone once marked; an index that hangs delays the answer 2 s at most
    // (the alarm finishes the deletion).
    const deleting = deleteRun(this.d.deletion, this.d.work.now());
    this.d.beside(deleting.then(() => {}));
    await atMost(deleting, INDEX_WAIT_MS);
    return { ok: true, status: run.status };
  }

  async cancel(owner: string): Promise<controls.ControlOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    const refused = controls.checkCancel(run);
    if (refused) return refused;
    // A live iteration is writing the rows: it cancels its own work, then we re-arm.
    if (!(await this.d.due.cancelLive())) this.cancelNow(this.d.work.now());
    await this.d.work.gate.cancel(); // its slots and places in queues go to other runs now
    await this.d.rearm();
    return { ok: true, status: this.checkpoint.run.read()!.status };
  }

  /** Continues a paused (bounded) run with `iterations` more iterations. */
  async resume(owner: string, iterations: number | undefined): Promise<controls.ControlOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    const refused = controls.checkResume(run);
    if (refused) return refused;
    const now = this.d.work.now();
    const more = controls.resumeIterations(this.checkpoint.plan.read(), iterations);
    this.checkpoint.resume(run.iterations + more, now);
    await this.d.rearm(now);
    this.d.wake();
    return { ok: true, status: "running" };
  }

  /** Redrive: re-runs failed steps and the steps skipped or cancelled because of them. */
  async redrive(owner: string): Promise<controls.ControlOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    const refused = controls.checkRedrive(run, () => this.checkpoint.compensations.any());
    if (refused) return refused;
    const now = this.d.work.now();
    this.checkpoint.redrive(now);
    this.d.work.results.clear(); // the redriven steps will have new results
    await this.d.rearm(now);
    this.d.wake();
    return { ok: true, status: "pending" };
  }

  /** Ends the run as cancelled now (no iteration is live). */
  cancelNow(now: number): void {
    this.checkpoint.cancelUnfinished(now);
    this.checkpoint.run.finish("cancelled", now);
    this.d.work.statusChanged("cancelled", now);
  }
}
