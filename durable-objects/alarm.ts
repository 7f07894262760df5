/**
 * The run's alarm, set in this one place. SQLite is the truth and the alarm only a pointer
 * at the earliest due row: a step's retry or timer, a compensation, a webhook delivery.
 * While work is in flight in this instance (an iteration, a compensation), the alarm points
 * at its lease instead, so a crash resumes the run; `alarm()` is safe to run twice.
 */
import type { RunRecord, RunStatus } from "../src/engine/records";
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

export class AlarmPointer {
  /** Until when in-flight work of this instance holds the alarm, or null. */
  private leaseUntil: number | null = null;

  constructor(
    private readonly port: () => AlarmPort,
    private readonly checkpoint: Checkpoint,
    private readonly now: () => number,
  ) {}

  /**
   * Work is in flight: keeps the alarm on a lease that outlives it, renewed at half its life
   * (`force`: now, e.g. when the alarm fired while the work is still live).
   */
  async renewLease({ force = false } = {}): Promise<void> {
    const now = this.now();
    if (!force && this.leaseUntil !== null && now + LEASE_MS / 2 < this.leaseUntil) return;
    this.leaseUntil = now + LEASE_MS;
    await this.rearm();
  }

  /** The in-flight work ended: the rows decide again. */
  releaseLease(): void {
    this.leaseUntil = null;
  }

  /** Points the alarm at the lease, else the earliest due row or `wake` (work ready then); clears it when nothing is due. */
  async rearm(wake: number | null = null): Promise<void> {
    const at = this.leaseUntil ?? this.target(wake);
    const port = this.port();
    if (at === null) await port.clear();
    else await port.set(alarmTime(at, this.now()));
  }

  private target(wake: number | null): number | null {
    const run = this.checkpoint.runRecord();
    if (!run) return null;
    const candidates = [
      wake,
      this.checkpoint.deliveries.earliestDue(),
      this.checkpoint.compensations.earliestDue(this.now()),
      iterates(run) ? this.checkpoint.steps.earliestDue() : null,
    ];
    const due = candidates.filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
  }
}
