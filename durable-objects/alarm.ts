/**
 * The run's alarm, set in this one place. SQLite is the truth and the alarm only a pointer
 * at the earliest due row: a step's retry or timer, a compensation, a webhook delivery, an
 * update of the run's listing entry (listingAlarmDue), the end of a final run's retention
 * (SPEC 8.3); once the run's deletion began, only the rest of the deletion. While work is in
 * flight in this instance (an iteration, a compensation), the alarm points no later than its
 * lease, so a crash resumes the run; `alarm()` is safe to run twice.
 */
import { listingAlarmDue } from "../src/engine/listing";
import type { RunRecord, RunStatus } from "../src/engine/records";
import { retentionDue } from "../src/engine/retention";
import { alarmTime } from "../src/engine/time-limits";
import type { AlarmPort } from "./alarm-port";
import type { Checkpoint } from "./storage/checkpoint";

/** While attempts are in flight the alarm points this far ahead, so a crash resumes the run. */
export const LEASE_MS = 10_000;

/** Statuses whose alarm runs iterations (a `waiting` run may have timeouts due). */
const ACTIVE: ReadonlySet<RunStatus> = new Set(["pending", "running", "waiting"]);

/** True when the alarm should run iterations: an active run not held at the risk gate. */
export function iterates(run: RunRecord): boolean {
  return ACTIVE.has(run.status) && !run.riskGate;
}

/** The key (in the object's key-value storage) of `wake`: owned here, and only here. */
const WAKE_KEY = "wake";

export interface LeaseRenewal {
  force?: boolean;
  due?: number | null;
}

export class AlarmPointer {
  /** Until when in-flight work of this instance holds the alarm, or null. */
  private leaseUntil: number | null = null;
  /** The live work's next timer (a retry, a `wait`, a forEach item's retry), held in memory. */
  private liveDue: number | null = null;
  /** When the alarm was last set for (null: cleared, or not set by this instance yet). */
  private pointedAt: number | null = null;
  /**
   * `wake` as stored (undefined: not read yet): read once, as this is its only writer. After a
   * wipe it may outlive the key, unread: with no run, `target` points at nothing.
   */
  private wake: number | null | undefined;

  constructor(
    private readonly port: () => AlarmPort,
    private readonly checkpoint: Checkpoint,
    private readonly now: () => number,
    /** RUN_RETENTION_DAYS: a final run's retention when its plan sets none. */
    private readonly retentionDays: number,
    /**
     * Where `wake` is kept: when work is ready without a row saying so (a new run, a bounded
     * wave's rest, an answer), until the alarm fires. Stored, not held in memory, so that a
     * rearm by a later instance (after a crash, an eviction, a schema upgrade) does not drop
     * it; key-value storage, so that it moves no status ETag.
     */
    private readonly kv: SyncKvStorage,
  ) {}

  /**
   * Work is in flight: keeps the alarm on a lease that outlives it, renewed at half its life
   * (`force`: now, e.g. when the alarm fired while the work is still live). `due`: the live
   * work's next timer (a retry, a `wait`; null: none); one earlier than the alarm moves it there
   * (see rearm). Left out, the one known stays: a renewal from outside the work knows none.
   */
  async renewLease({ force = false, due }: LeaseRenewal = {}): Promise<void> {
    const now = this.now();
    const fresh = !force && this.leaseUntil !== null && now + LEASE_MS / 2 < this.leaseUntil;
    const earlier = due != null && due > now && (this.pointedAt === null || due < this.pointedAt);
    if (due !== undefined) this.liveDue = due;
    if (fresh && !earlier) return;
    if (!fresh) this.leaseUntil = now + LEASE_MS;
    await this.rearm();
  }

  /** The alarm fired: the `wake` it was set for is being served. */
  fired(): void {
    this.kv.delete(WAKE_KEY);
    this.wake = null;
  }

  /** The in-flight work ended: the rows decide again. */
  releaseLease(): void {
    this.leaseUntil = null;
    this.liveDue = null;
  }

  /**
   * Points the alarm at the earliest due row or `wake` (work ready then); clears it when
   * nothing is due. A `wake` is kept until the alarm fires: a later rearm (a listing update or
   * webhook delivery settling beside the run) must not drop it. Under a lease, at the lease or
   * at the next row or live timer due later than now, whichever comes first: the live work
   * serves its timers in memory, but should this instance die, the alarm wakes the run when
   * the next one falls due (a `wait` or a retry on time), not only when the lease runs out.
   * Times already past are the live work's: pointing at them would fire the alarm again and again.
   */
  async rearm(wake: number | null = null): Promise<void> {
    if (this.wake === undefined) this.wake = this.kv.get<number>(WAKE_KEY) ?? null;
    const kept = this.wake;
    if (wake !== null && (kept === null || wake < kept)) this.kv.put(WAKE_KEY, (this.wake = wake));
    const due = this.target(kept === null ? wake : Math.min(kept, wake ?? kept));
    const now = this.now();
    const ahead = [due, this.liveDue].filter((t): t is number => t !== null && t > now);
    const at = this.leaseUntil === null ? due : Math.min(this.leaseUntil, ...ahead);
    const port = this.port();
    this.pointedAt = at === null ? null : alarmTime(at, now);
    if (this.pointedAt === null) await port.clear();
    else await port.set(this.pointedAt);
  }

  private target(wake: number | null): number | null {
    const c = this.checkpoint;
    const run = c.runRecord();
    if (!run) return null;
    const listing = listingAlarmDue(run, c.listing.read());
    if (run.deleteRequestedAt !== null) return listing;
    const candidates = [
      wake,
      c.deliveries.earliestDue(),
      c.compensations.earliestDue(this.now()),
      iterates(run) ? c.steps.earliestDue() : null,
      listing,
      retentionDue(run, c.plan.read().config.retentionDays, this.retentionDays),
    ];
    const due = candidates.filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
  }
}
