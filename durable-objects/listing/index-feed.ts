/**
 * IndexFeed: keeps the run's entry in its owner's RunIndex up to date from the checkpoint
 * (SPEC 8.2), through the listing outbox (storage/listing-outbox-table.ts): the outbox row
 * says which listing state the index acknowledged, and `listingUpdateDue` says when the
 * next update is due: at once when the status changed, at most every 5 s for progress.
 *
 * - Durable: the alarm points at a due update (alarm.ts), so an update lost with the object
 *   (a crash, the index unreachable) is sent again by the alarm. An update is claimed while
 *   in flight; a failure backs off (1 s, 2 s, ... 60 s).
 * - Idempotent: each update carries the run's version; the index ignores an older one.
 * - Off the hot path: the checkpoint's writes only `touch()` the feed (no I/O); it looks once
 *   the current turn is over, sends beside the run (never awaited by an iteration), and at
 *   most one update is in flight. Completing a step costs no RPC.
 */
import {
  CLAIM_MS,
  listingBackoff,
  listingEntry,
  listingState,
  listingUpdateDue,
  type ListingEntry,
} from "../../src/engine/listing";
import type { RunRecord } from "../../src/engine/records";
import { atMost } from "../at-most";
import type { UpsertOutcome } from "../run-index/run-index";
import type { Checkpoint } from "../storage/checkpoint";

/** What the feed needs of the owner's RunIndex (its RPC stub). */
export interface IndexPort {
  upsert(entry: ListingEntry): Promise<UpsertOutcome>;
  remove(runId: string): Promise<void>;
}

export interface FeedDeps {
  checkpoint: Checkpoint;
  index(owner: string): IndexPort;
  now(): number;
  /** Runs work beside the run: the object stays alive for it (and tests can wait for it). */
  beside(work: Promise<void>): void;
  /** Points the alarm at what is due next. */
  rearm(): Promise<void>;
}

/** How long a request (a new run's POST, a DELETE) waits for the index at most. */
export const INDEX_WAIT_MS = 2_000;
/** A due time further ahead than this is left to the alarm rather than a timer. */
const TIMER_HORIZON_MS = 5_000;

export class IndexFeed {
  private sending: Promise<void> | undefined;
  private lookAgain = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly deps: FeedDeps) {}

  /** The checkpoint changed: looks whether an update is due once the current turn is over. */
  touch(): void {
    if (this.sending) this.lookAgain = true;
    else if (this.timer === undefined) this.lookIn(0);
  }

  /**
   * The run's status was written: a new status is due at once (`running` soon), so a timer
   * set for progress, which may be 5 s away, must not hold it back.
   */
  statusWritten(): void {
    if (this.sending) this.lookAgain = true;
    else this.lookIn(0);
  }

  /** Sends the update if one is due now (beside the run), or looks again when one falls due soon. */
  flush(): void {
    if (this.sending) {
      this.lookAgain = true;
      return;
    }
    const run = this.deps.checkpoint.runRecord();
    if (!run || run.deleteRequestedAt !== null) return;
    const due = listingUpdateDue(run, this.deps.checkpoint.listing.read());
    if (due === null) return;
    const wait = due - this.deps.now();
    if (wait > 0) {
      if (wait <= TIMER_HORIZON_MS) this.lookIn(wait);
      return;
    }
    this.deps.beside(this.track(this.send(run).then(() => this.deps.rearm())));
  }

  /**
   * Sends the run's entry now and waits for the index, so a new run is listed before its POST
   * answers; at most INDEX_WAIT_MS: an index that hangs delays no submission (the update
   * goes on beside the run, and the outbox has it should it fail).
   */
  async publish(): Promise<void> {
    await this.settled();
    const run = this.deps.checkpoint.runRecord();
    if (!run || listingUpdateDue(run, this.deps.checkpoint.listing.read()) === null) return;
    const sending = this.track(this.send(run));
    this.deps.beside(sending);
    await atMost(sending, INDEX_WAIT_MS);
  }

  /**
   * Removes the deleted run's entry, once any update in flight has settled (the index also
   * ignores updates for a removed run). Throws when the index cannot be reached: the outbox
   * then backs off and the alarm tries again.
   */
  async remove(run: RunRecord): Promise<void> {
    await this.settled();
    const { checkpoint: c, now } = this.deps;
    try {
      await this.deps.index(run.owner).remove(run.id);
    } catch (err) {
      c.listing.failed(now() + listingBackoff(c.listing.read().failures + 1));
      throw err;
    }
  }

  /** Resolves once no update is in flight. */
  async settled(): Promise<void> {
    while (this.sending) await this.sending.catch(() => {});
  }

  private track(work: Promise<void>): Promise<void> {
    const tracked = work.finally(() => {
      this.sending = undefined;
      if (this.lookAgain) {
        this.lookAgain = false;
        this.flush();
      }
    });
    this.sending = tracked;
    return tracked;
  }

  private lookIn(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, ms);
  }

  /** One update: claimed, sent, then acknowledged (or backed off). Never throws. */
  private async send(run: RunRecord): Promise<void> {
    const { checkpoint: c, now } = this.deps;
    const state = listingState(run);
    const entry = listingEntry(run, c.plan.read());
    c.listing.claim(now() + CLAIM_MS);
    try {
      await this.deps.index(run.owner).upsert(entry);
      if (c.runRecord()) c.listing.acked(state, run.status, now());
    } catch (err) {
      if (c.runRecord()) c.listing.failed(now() + listingBackoff(c.listing.read().failures + 1));
      console.warn(`edgestep: run ${run.id}: its listing entry could not be updated`, err);
    }
  }
}
