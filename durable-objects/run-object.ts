/**
 * RunObject: one Durable Object per run, a thin shell. Its RPCs (the API's) check that the
 * caller owns the run, ask a pure decision (controls/) or build a view (views/), commit, and
 * end with `rearm()`. Its `alarm()` runs an iteration (execution/), due compensations
 * (rollback/), webhook deliveries (webhooks/), updates of the run's listing entry
 * (listing/) and the run's deletion (controls/deletion.ts). Every table has one owner
 * (storage/); docs/architecture.md is the map.
 *
 * SQLite is the truth; the alarm is a pointer: `rearm()` aims it at the earliest due row
 * (alarm.ts), and `alarm()` is safe to run twice.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env, type Settings } from "../src/env";
import { riskGateSteps } from "../src/engine/approval";
import type { CompiledPlan } from "../src/engine/plan";
import type { RunRecord } from "../src/engine/records";
import type { CallbackAnswer } from "../src/engine/verdict";
import { iterates } from "./alarm";
import { storageAlarm, type AlarmPort } from "./alarm-port";
import type { ApproveOutcome, ApproveRequest } from "./controls/approval-control";
import { OutsideAnswers } from "./controls/outside-answers";
import type { ReplanOutcome } from "./controls/replan-control";
import * as controls from "./controls/run-controls";
import {
  checkDelete,
  continueDeletion,
  deleteRun,
  isDeleted,
  retentionEnded,
  type DeletionDeps,
} from "./controls/deletion";
import { Iteration } from "./execution/iteration";
import { atMost } from "./at-most";
import { INDEX_WAIT_MS, IndexFeed } from "./listing/index-feed";
import { BOARD_NAME, type PauseNotice } from "./destinations/pause-board";
import { wireRun } from "./run-wiring";
import type { WebhookOutbox } from "./webhooks/outbox";
import { runRollback } from "./rollback/rollback";
import { runIndexOf } from "./run-index/run-index";
import type { RunContext } from "./run-context";
import { Checkpoint } from "./storage/checkpoint";
import { RunReads } from "./views/run-reads";
import type { StepsQuery } from "./views/run-views";
import type { StatusRead } from "./views/status-reads";
import { StepViews } from "./views/step-views";

// The API imports these from here: they are the types of the RPC surface.
export type { ApproveOutcome, ApproveRequest } from "./controls/approval-control";
export type { ControlOutcome, CreateOutcome, RunLookup } from "./controls/run-controls";
export type { ReplanOutcome } from "./controls/replan-control";
export type { AlarmPort } from "./alarm-port";
export type { StepsQuery } from "./views/run-views";
export type { StatusRead, StatusView } from "./views/status-reads";

export class RunObject extends DurableObject<Env> {
  private readonly config: Settings;
  private readonly checkpoint: Checkpoint;
  private readonly outbox: WebhookOutbox;
  /** The steps of the full status, as JSON text kept per step (see StepViews). */
  private readonly stepViews = new StepViews();
  /** What iterations, compensations and answers share. */
  private readonly work: RunContext;
  /** The iteration live in this instance: answers and cancels go through it. */
  private iteration: Iteration | undefined;
  /** Settles when the live iteration ends (a cancel waits for it). */
  private iterationDone: Promise<number | null> | undefined;
  /** Work this instance runs beside the run (webhook deliveries, iterations started at once, listing updates). */
  private readonly background = new Set<Promise<void>>();
  /** The turn of the last `alarm()` call: calls take turns (see alarm()). */
  private alarmTurn: Promise<void> = Promise.resolve();
  /** Keeps the run's entry in its owner's RunIndex current (SPEC 8.2). */
  private readonly feed: IndexFeed;
  private readonly deletion: DeletionDeps;
  private readonly reads: RunReads;
  private readonly answers: OutsideAnswers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = settings(env);
    const checkpoint = new Checkpoint(ctx.storage, this.config.maxEventsPerRun, (i) =>
      this.stepViews.changed(i),
    );
    const now = () => this.now();
    this.checkpoint = checkpoint;
    const wired = wireRun(ctx.storage, env, this.config, checkpoint, {
      now,
      alarms: () => this.alarms,
      beside: (work) => this.beside(work),
      readBoard: this.pauseBoard,
      granted: (destination, ticket) => this.quotaGranted(destination, ticket),
    });
    this.work = wired.work;
    this.outbox = wired.outbox;
    const rearm = () => this.rearm();
    this.feed = new IndexFeed({
      checkpoint,
      index: (owner) => runIndexOf(env, owner),
      now,
      beside: (work) => this.beside(work),
      rearm,
    });
    checkpoint.changes.listen(() => this.feed.touch());
    this.deletion = { checkpoint, feed: this.feed, now, rearm };
    const { outbox, stepViews } = this;
    this.answers = new OutsideAnswers({
      work: this.work,
      now,
      iteration: () => this.iteration,
      live: () => this.live(),
      owned: (owner) => this.owned(owner),
      rearm: (wake) => this.rearm(wake),
      wake: () => this.wake(),
      cancelNow: (at) => this.cancelNow(at),
    });
    this.reads = new RunReads({ checkpoint, outbox, stepViews, now, live: () => this.live() });
    // A run stored by an earlier version joins its owner's listing, and gets its retention
    // alarm, the first time anything wakes it (SPEC 8).
    if (checkpoint.upgraded) void ctx.blockConcurrencyWhile(rearm);
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
    if (isDeleted(this.checkpoint)) return { deleted: true };
    const existing = this.checkpoint.runRecord();
    if (existing) return { created: false, status: existing.status };
    const now = this.now();
    const riskGate = riskGateSteps(plan);
    this.checkpoint.create({ id: runId, owner, plan, now, baseUrl, riskGate });
    if (riskGate.length > 0) {
      const data = { gate: "risk", stepIds: riskGate };
      this.checkpoint.events.append("approval_requested", now, null, null, data);
      this.work.statusChanged("waiting", now);
    }
    const wake = riskGate.length > 0 ? null : now;
    // The alarm is set in this same turn, so the run and its alarm commit together: after a
    // crash from here on, the alarm still starts the run and sends its listing entry.
    await this.work.alarm.rearm(wake);
    await this.feed.publish();
    await this.rearm(wake);
    if (wake === null) return { created: true, status: "waiting" };
    this.wake();
    return { created: true, status: "pending" };
  }

  /**
   * What this id holds for `owner`: its run's status, a deleted run (whose Idempotency-Key
   * moves on to a later generation), or nothing. Lets a retried idempotent POST find its run
   * without spending rate limit.
   */
  async lookup(owner: string): Promise<controls.RunLookup> {
    if (isDeleted(this.checkpoint))
      return {
        type: "deleted",
        latestGeneration: this.checkpoint.tombstone.read()?.latestGeneration ?? 0,
      };
    const run = this.owned(owner);
    return run ? { type: "run", status: run.status } : { type: "none" };
  }

  /** On a deleted run's id: `generation` of its Idempotency-Key was created (a hint for lookups). */
  async noteGeneration(generation: number): Promise<void> {
    this.checkpoint.tombstone.noteGeneration(generation);
  }

  /** `DELETE /v1/runs/:id` (SPEC 8.3): a final run is deleted now (see controls/deletion.ts). */
  async deleteRun(owner: string): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = checkDelete(run, this.checkpoint, this.now());
    if (refused) return refused;
    // The run reads as gone once marked; an index that hangs delays the answer 2 s at most
    // (the alarm finishes the deletion).
    const deleting = deleteRun(this.deletion, this.now());
    this.beside(deleting.then(() => {}));
    await atMost(deleting, INDEX_WAIT_MS);
    return { ok: true, status: run.status };
  }

  // The reads (SPEC 6, 6.1): views/run-reads.ts.
  async status(owner: string, read: StatusRead = { view: "full" }) {
    return this.reads.status(owner, read);
  }

  async steps(owner: string, query: StepsQuery) {
    return this.reads.steps(owner, query);
  }

  async step(owner: string, stepId: string) {
    return this.reads.step(owner, stepId);
  }

  async plan(owner: string) {
    return this.reads.plan(owner);
  }

  async results(owner: string, after = -1) {
    return this.reads.results(owner, after);
  }

  async events(owner: string, after: number, limit: number, waitMs = 0) {
    return this.reads.events(owner, after, limit, waitMs);
  }

  async cancel(owner: string): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkCancel(run);
    if (refused) return refused;
    // A live iteration is writing the rows: it cancels its own work, then we re-arm.
    if (this.iteration) {
      this.iteration.cancel();
      await this.iterationDone;
    } else this.cancelNow(this.now());
    await this.work.gate.cancel(); // its slots and places in queues go to other runs now
    await this.rearm();
    return { ok: true, status: this.checkpoint.run.read()!.status };
  }

  /** Continues a paused (bounded) run with `iterations` more iterations. */
  async resume(owner: string, iterations: number | undefined): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkResume(run);
    if (refused) return refused;
    const now = this.now();
    const more = controls.resumeIterations(this.checkpoint.plan.read(), iterations);
    this.checkpoint.resume(run.iterations + more, now);
    await this.rearm(now);
    this.wake();
    return { ok: true, status: "running" };
  }

  /** Redrive: re-runs failed steps and the steps skipped or cancelled because of them. */
  async redrive(owner: string): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkRedrive(run, () => this.checkpoint.compensations.any());
    if (refused) return refused;
    const now = this.now();
    this.checkpoint.redrive(now);
    this.work.results.clear(); // the redriven steps will have new results
    await this.rearm(now);
    this.wake();
    return { ok: true, status: "pending" };
  }

  /**
   * Runs what is due: an iteration, compensations, webhook deliveries, listing updates, the
   * run's deletion (by DELETE or retention). Safe to run twice:
   * the rows say what is due. While an iteration is live it only renews its lease; other
   * calls (workerd's alarm, a wake, a test) take turns, so two never interleave.
   */
  override async alarm(): Promise<void> {
    if (this.iteration) {
      await this.work.alarm.renewLease({ force: true });
      return;
    }
    const turn = this.alarmTurn.then(() => this.runDue());
    this.alarmTurn = turn.catch(() => {});
    await turn;
  }

  /**
   * Work became ready now (a new run, a resume, an answer): run it in this instance at once
   * rather than when workerd delivers the alarm, which stays set should this instance go
   * away. (Tests substitute a no-op: only they move a run.)
   */
  protected wake(): void {
    const due = this.alarm().catch((err: unknown) => {
      console.error("edgestep: an iteration started at once failed; the alarm retries it", err);
    });
    this.beside(due);
  }

  private async runDue(): Promise<void> {
    const run = this.checkpoint.runRecord();
    if (!run) return;
    if (this.iteration) return; // (a turn queued behind the one that started it)
    this.work.alarm.fired();
    if (run.deleteRequestedAt !== null) {
      await continueDeletion(this.deletion);
      return;
    }
    if (retentionEnded(this.checkpoint, run, this.now(), this.config.retentionDays)) {
      await deleteRun(this.deletion, this.now());
      return;
    }
    const wake = iterates(run) ? await this.runIteration(run) : null;
    if (this.checkpoint.compensations.earliestDue(this.now()) !== null)
      await runRollback(this.work, run.id, run.baseUrl);
    // A run that stopped (its rollback done) gives back its places in destinations' queues.
    if (!iterates(this.checkpoint.run.read()!) && !this.checkpoint.compensations.next())
      this.beside(this.work.gate.cancel());
    this.work.alarm.releaseLease();
    // Deliveries go on beside the run: a slow receiver never holds this alarm (nor the next).
    this.beside(this.deliverWebhooks());
    await this.rearm(wake);
  }

  /** Resolves once the work this instance runs beside the run (webhook deliveries) has settled. */
  async drained(): Promise<void> {
    while (this.background.size > 0) await Promise.all(this.background);
  }

  private beside(work: Promise<void>): void {
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
    this.ctx.waitUntil(work);
  }

  /** Runs one iteration; resolves to when the next should run (null: the rows decide). */
  private async runIteration(run: RunRecord): Promise<number | null> {
    this.iteration = new Iteration(this.work, run);
    this.iterationDone = this.iteration.run();
    try {
      return await this.iterationDone;
    } finally {
      this.iteration = undefined;
      this.iterationDone = undefined;
      this.work.alarm.releaseLease();
    }
  }

  // Answers from outside (approvals, callbacks, repairs, grants): controls/outside-answers.ts.
  async approve(owner: string, request: ApproveRequest): Promise<ApproveOutcome> {
    return this.answers.approve(owner, request);
  }

  async replan(owner: string, body: unknown): Promise<ReplanOutcome> {
    return this.answers.replan(owner, body);
  }

  async answerCallback(token: string, answer: CallbackAnswer) {
    return this.answers.answerCallback(token, answer);
  }

  async quotaGranted(destination: string, ticket: string): Promise<void> {
    return this.answers.quotaGranted(destination, ticket);
  }

  private cancelNow(now: number): void {
    this.checkpoint.cancelUnfinished(now);
    this.checkpoint.run.finish("cancelled", now);
    this.work.statusChanged("cancelled", now);
  }

  /** Sends the due webhook deliveries, then points the alarm at what is due next. */
  private async deliverWebhooks(): Promise<void> {
    const webhook = this.checkpoint.plan.read().webhook;
    const due = this.checkpoint.deliveries.earliestDue();
    if (!webhook || due === null || due > this.now()) return;
    const secret = webhook.secret ?? this.env.WEBHOOK_SECRET;
    try {
      await this.outbox.deliverDue({ url: webhook.url, secret }, this.now());
      await this.rearm();
    } catch (err) {
      // The rows stay due: the next alarm sends them again.
      console.error("edgestep: webhook delivery failed", err);
    }
  }

  /**
   * A commit point: trims the event log, sends the listing update if one is due (beside the
   * run) and points the alarm at what is due next (or at `wake`).
   */
  private async rearm(wake: number | null = null): Promise<void> {
    if (this.checkpoint.runRecord()) {
      this.checkpoint.events.trim();
      this.feed.flush();
    }
    await this.work.alarm.rearm(wake);
  }

  /** The run, unless there is none or its deletion began (then it reads as gone). */
  private live(): RunRecord | undefined {
    const run = this.checkpoint.runRecord();
    return run && run.deleteRequestedAt === null ? run : undefined;
  }

  private owned(owner: string): RunRecord | undefined {
    return this.reads.owned(owner);
  }

  /** The run's clock. Tests substitute one they can move forward (test/support). */
  protected now(): number {
    return Date.now();
  }

  /**
   * Where this instance reads the pauses other isolates found (the pause board), in the
   * background. Tests read none: every run of the test Worker shares one isolate, and a read
   * landing at a moment of its own would race them.
   */
  protected get pauseBoard(): (() => Promise<PauseNotice[]>) | null {
    const boards = this.env.PAUSE_BOARD;
    return () => boards.get(boards.idFromName(BOARD_NAME)).current();
  }

  /** The run's alarm: workerd's. Tests substitute one only they fire, so nothing races them. */
  protected get alarms(): AlarmPort {
    return storageAlarm(this.ctx.storage);
  }
}
