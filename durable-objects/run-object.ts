/**
 * RunObject: one Durable Object per run, a thin shell. Its RPCs (the API's) go to the run's
 * lifecycle (controls/run-lifecycle.ts), answers from outside (controls/outside-answers.ts)
 * or reads (views/run-reads.ts); each change ends with `rearm()`. Its `alarm()` runs what is
 * due (execution/due-work.ts): an iteration, compensations, webhook deliveries, the run's
 * deletion; `rearm()` also sends the run's listing entry (listing/). Every table has one owner
 * (storage/); docs/architecture.md is the map.
 *
 * SQLite is the truth; the alarm is a pointer: `rearm()` aims it at the earliest due row
 * (alarm.ts), and `alarm()` is safe to run twice.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env, type Settings } from "../src/env";
import type { CompiledPlan } from "../src/engine/plan";
import type { RepairAnswer } from "../src/engine/plan-schema";
import type { RunRecord } from "../src/engine/records";
import type { CallbackAnswer } from "../src/engine/verdict";
import type { AlarmPointer } from "./alarm";
import { storageAlarm, type AlarmPort } from "./alarm-port";
import type { ApproveOutcome, ApproveRequest } from "./controls/approval-control";
import { OutsideAnswers } from "./controls/outside-answers";
import type { ReplanOutcome } from "./controls/replan-control";
import type * as controls from "./controls/run-controls";
import { RunLifecycle } from "./controls/run-lifecycle";
import { DueWork } from "./execution/due-work";
import { IndexFeed } from "./listing/index-feed";
import { sharedBoardRead } from "./destinations/board-reads";
import { BOARD_NAME, type PauseNotice } from "./destinations/pause-board";
import { wireRun } from "./run-wiring";
import { runIndexOf } from "./run-index/run-index";
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
  private readonly checkpoint: Checkpoint;
  /** The steps of the full status, as JSON text kept per step (see StepViews). */
  private readonly stepViews = new StepViews();
  /** Work this instance runs beside the run (webhook deliveries, iterations started at once, listing updates). */
  private readonly background = new Set<Promise<void>>();
  /** Keeps the run's entry in its owner's RunIndex current (SPEC 8.2). */
  private readonly feed: IndexFeed;
  /** Aims the alarm at what is due next (alarm.ts): the one place it is set. */
  private readonly alarmPointer: AlarmPointer;
  private readonly due: DueWork;
  private readonly lifecycle: RunLifecycle;
  private readonly reads: RunReads;
  private readonly answers: OutsideAnswers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const config = settings(env);
    const checkpoint = new Checkpoint(ctx.storage, config.maxEventsPerRun, (i) =>
      this.stepViews.changed(i),
    );
    this.checkpoint = checkpoint;
    const now = () => this.now();
    const beside = (work: Promise<void>) => this.beside(work);
    const rearm = (wake?: number | null) => this.rearm(wake);
    const { work, outbox } = wireRun(ctx.storage, env, config, checkpoint, {
      now,
      alarms: () => this.alarms,
      beside,
      readBoard: this.pauseBoard,
      granted: (destination, ticket) => this.quotaGranted(destination, ticket),
    });
    this.alarmPointer = work.alarm;
    this.feed = new IndexFeed({ checkpoint, index: (o) => runIndexOf(env, o), now, beside, rearm });
    checkpoint.changes.listen(() => this.feed.touch());
    checkpoint.changes.listenForStatus(() => this.feed.statusWritten());
    const deletion = { checkpoint, feed: this.feed, now, rearm };
    const { retentionDays } = config;
    this.due = new DueWork({
      work,
      outbox,
      deletion,
      retentionDays,
      webhookSecret: env.WEBHOOK_SECRET,
      beside,
      rearm,
      restart: (reason) => {
        console.error(reason);
        this.ctx.abort(reason);
        throw new Error(reason); // (abort throws already: for the type checker)
      },
    });
    const owned = (owner: string) => this.reads.owned(owner);
    const wake = () => this.wake();
    this.lifecycle = new RunLifecycle({
      work,
      feed: this.feed,
      deletion,
      due: this.due,
      owned,
      rearm,
      wake,
      beside,
    });
    this.answers = new OutsideAnswers({
      work,
      now,
      iteration: () => this.due.iteration,
      live: () => this.live(),
      owned,
      rearm,
      wake,
      cancelNow: (at) => this.lifecycle.cancelNow(at),
    });
    const { stepViews } = this;
    this.reads = new RunReads({ checkpoint, outbox, stepViews, now, live: () => this.live() });
    // A run stored by an earlier version joins its owner's listing, and gets its retention
    // alarm, the first time anything wakes it (SPEC 8).
    if (checkpoint.upgraded) void ctx.blockConcurrencyWhile(rearm);
  }

  // The lifecycle (SPEC 4, 7, 8.3): controls/run-lifecycle.ts.
  async create(runId: string, owner: string, plan: CompiledPlan, baseUrl: string) {
    return this.lifecycle.create(runId, owner, plan, baseUrl);
  }

  /** What this id holds for `owner` (lets a retried idempotent POST find its run). */
  async lookup(owner: string): Promise<controls.RunLookup> {
    return this.lifecycle.lookup(owner);
  }

  /** On a deleted run's id: `generation` of its Idempotency-Key was created (a hint for lookups). */
  async noteGeneration(generation: number): Promise<void> {
    this.checkpoint.tombstone.noteGeneration(generation);
  }

  async deleteRun(owner: string): Promise<controls.ControlOutcome> {
    return this.lifecycle.deleteRun(owner);
  }

  async cancel(owner: string): Promise<controls.ControlOutcome> {
    return this.lifecycle.cancel(owner);
  }

  async resume(owner: string, iterations: number | undefined): Promise<controls.ControlOutcome> {
    return this.lifecycle.resume(owner, iterations);
  }

  async redrive(owner: string): Promise<controls.ControlOutcome> {
    return this.lifecycle.redrive(owner);
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

  // Answers from outside (approvals, callbacks, repairs, grants): controls/outside-answers.ts.
  async approve(owner: string, request: ApproveRequest): Promise<ApproveOutcome> {
    return this.answers.approve(owner, request);
  }

  async replan(owner: string, answer: RepairAnswer): Promise<ReplanOutcome> {
    return this.answers.replan(owner, answer);
  }

  async answerCallback(token: string, answer: CallbackAnswer) {
    return this.answers.answerCallback(token, answer);
  }

  async quotaGranted(destination: string, ticket: string): Promise<void> {
    return this.answers.quotaGranted(destination, ticket);
  }

  /**
   * Runs what is due (execution/due-work.ts): an iteration, compensations, webhook deliveries,
   * the run's deletion. Safe to run twice: the rows say what is due. While one call (workerd's
   * alarm, a wake, a test) runs it, another only renews the lease; the alarm also restarts the
   * object when a call in flight was lost (DueWork.run's watch).
   */
  override async alarm(): Promise<void> {
    await this.due.run({ watch: true });
  }

  /**
   * Work became ready now (a new run, a resume, an answer): run it in this instance at once
   * rather than when workerd delivers the alarm, which stays set should this instance go
   * away. (Tests substitute a no-op: only they move a run.)
   */
  protected wake(): void {
    // Not the alarm: a request's wake never restarts the object (its change is saved, its
    // caller waits for the answer); the alarm, still set, watches the calls.
    const due = this.due.run().catch((err: unknown) => {
      console.error("edgestep: an iteration started at once failed; the alarm retries it", err);
    });
    this.beside(due);
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

  /**
   * A commit point: trims the event log, sends the listing update if one is due (beside the
   * run) and points the alarm at what is due next (or at `wake`).
   */
  private async rearm(wake: number | null = null): Promise<void> {
    if (this.checkpoint.runRecord()) {
      this.checkpoint.events.trim();
      this.feed.flush();
    }
    await this.alarmPointer.rearm(wake);
  }

  /** The run, unless there is none or its deletion began (then it reads as gone). */
  private live(): RunRecord | undefined {
    const run = this.checkpoint.runRecord();
    return run && run.deleteRequestedAt === null ? run : undefined;
  }

  /** The run's clock. Tests substitute one they can move forward (test/support). */
  protected now(): number {
    return Date.now();
  }

  /**
   * Where this instance reads the pauses other isolates found (the pause board, through the
   * location's shared copy), in the background. Tests read none: every run of the test Worker
   * shares one isolate, and a read landing at a moment of its own would race them.
   */
  protected get pauseBoard(): (() => Promise<PauseNotice[]>) | null {
    const boards = this.env.PAUSE_BOARD;
    const read = () => boards.get(boards.idFromName(BOARD_NAME)).current();
    return sharedBoardRead(read, caches.default, Date.now);
  }

  /** The run's alarm: workerd's. Tests substitute one only they fire, so nothing races them. */
  protected get alarms(): AlarmPort {
    return storageAlarm(this.ctx.storage);
  }
}
