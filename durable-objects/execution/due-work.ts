/**
 * What one `alarm()` call does: runs what the rows say is due (the run's deletion, by DELETE
 * or retention; an iteration; due compensations; webhook deliveries beside the run) and ends
 * by re-arming. Holds the iteration live in this instance, so answers and cancels go through
 * it. While one call runs what is due, another only renews the lease: two never interleave,
 * and running one twice is safe.
 */
import { lostCallMessage, watchCalls } from "../../src/engine/call-watch";
import type { RunRecord } from "../../src/engine/records";
import { iterates } from "../alarm";
import {
  continueDeletion,
  deleteRun,
  retentionEnded,
  type DeletionDeps,
} from "../controls/deletion";
import { runRollback } from "../rollback/rollback";
import type { RunContext } from "../run-context";
import type { WebhookOutbox } from "../webhooks/outbox";
import { Iteration } from "./iteration";

export interface DueWorkDeps {
  work: RunContext;
  outbox: WebhookOutbox;
  deletion: DeletionDeps;
  /** The Worker's retention (RETENTION_DAYS), for runs whose plan sets none. */
  retentionDays: number;
  /** The Worker's webhook secret, for plans whose webhook names none. */
  webhookSecret: string | undefined;
  /** Runs work beside the run (the object's waitUntil set). */
  beside(work: Promise<void>): void;
  /** The object's commit point (see RunObject.rearm). */
  rearm(wake?: number | null): Promise<void>;
  /** Ends this instance as a crash would (its memory lost, its storage and alarm kept). */
  restart(reason: string): never;
}

export class DueWork {
  /** The iteration live in this instance: answers and cancels go through it. */
  private live: Iteration | undefined;
  /** Settles when the live iteration ends (a cancel waits for it). */
  private liveDone: Promise<number | null> | undefined;
  /** True while a call runs what is due (an iteration, a rollback, a deletion). */
  private busy = false;
  /** Whether another call renewed the lease while one ran what is due. */
  private renewedMeanwhile = false;

  constructor(private readonly d: DueWorkDeps) {}

  get iteration(): Iteration | undefined {
    return this.live;
  }

  /**
   * Runs what is due; while another call does so (an iteration, a rollback), only nudges a live
   * iteration (it looks again at what is due) and renews the lease: what is due never runs
   * twice at once, the alarm keeps coming back while work is in flight, and what became ready
   * meanwhile (a stored `wake`) runs when that call ends and re-arms. `watch` (workerd's alarm
   * only, never a request's wake) comes first, busy or not: a call in flight long past its
   * timeout was lost, and what waits on it would wait for good, so the instance restarts (its
   * other work, and requests in flight, with it, as a crash would).
   */
  async run({ watch = false }: { watch?: boolean } = {}): Promise<void> {
    if (watch) this.restartIfLost();
    if (this.busy) {
      this.live?.nudge();
      this.renewedMeanwhile = true;
      await this.d.work.alarm.renewLease({ force: true });
      return;
    }
    this.busy = true;
    try {
      await this.runDue();
    } finally {
      this.busy = false;
    }
    // A lease renewed meanwhile may have come after the one this call released: release it
    // and re-arm, last. (After a throw the lease stays: interrupted work resumes at it.)
    if (this.renewedMeanwhile) {
      this.renewedMeanwhile = false;
      this.d.work.alarm.releaseLease();
      await this.d.rearm();
    }
  }

  private restartIfLost(): void {
    const verdict = watchCalls(this.d.work.calls.inFlight(), this.d.work.now());
    if (verdict.type === "healthy") return;
    const runId = this.d.work.checkpoint.runRecord()?.id ?? "(none)";
    this.d.restart(lostCallMessage(runId, verdict));
  }

  /** Asks the live iteration to cancel its own work and waits for it; false when none is live. */
  async cancelLive(): Promise<boolean> {
    if (!this.live) return false;
    this.live.cancel();
    await this.liveDone;
    return true;
  }

  private async runDue(): Promise<void> {
    const { work, deletion } = this.d;
    const run = work.checkpoint.runRecord();
    if (!run) return;
    work.alarm.fired();
    if (run.deleteRequestedAt !== null) {
      await continueDeletion(deletion);
      return;
    }
    if (retentionEnded(work.checkpoint, run, work.now(), this.d.retentionDays)) {
      await deleteRun(deletion, work.now());
      return;
    }
    const wake = iterates(run) ? await this.runIteration(run) : null;
    // Deliveries go on beside the run: a slow receiver never holds this alarm (nor the next),
    // and a failed run's event goes out before its rollback, not after it.
    this.d.beside(this.deliverWebhooks());
    if (work.checkpoint.compensations.earliestDue(work.now()) !== null)
      await runRollback(work, run.id, run.baseUrl);
    // A run that stopped (its rollback done) gives back its places in destinations' queues.
    if (!iterates(work.checkpoint.run.read()!) && !work.checkpoint.compensations.next())
      this.d.beside(work.gate.cancel());
    work.alarm.releaseLease();
    await this.d.rearm(wake);
  }

  /** Runs one iteration; resolves to when the next should run (null: the rows decide). */
  private async runIteration(run: RunRecord): Promise<number | null> {
    this.live = new Iteration(this.d.work, run);
    this.liveDone = this.live.run();
    try {
      return await this.liveDone;
    } finally {
      this.live = undefined;
      this.liveDone = undefined;
      this.d.work.alarm.releaseLease();
    }
  }

  /** Sends the due webhook deliveries, then points the alarm at what is due next. */
  private async deliverWebhooks(): Promise<void> {
    const { checkpoint, now } = this.d.work;
    const webhook = checkpoint.plan.read().webhook;
    const due = checkpoint.deliveries.earliestDue();
    if (!webhook || due === null || due > now()) return;
    const secret = webhook.secret ?? this.d.webhookSecret;
    try {
      await this.d.outbox.deliverDue({ url: webhook.url, secret }, now());
      await this.d.rearm();
    } catch (err) {
      // The rows stay due: the next alarm sends them again.
      console.error("edgestep: webhook delivery failed", err);
    }
  }
}
