/**
 * TestDestinationObject: the DestinationObject the workers tests run, with its clock and alarm
 * substituted through its two seams (`now()`, `alarms`), as TestRunObject does for runs: its
 * leases expire and its queue wakes (a token refills, a pause ends) only when a test moves its
 * clock and fires its alarm, so nothing races a test. Read-only seams show what the API does not.
 */
import { DestinationObject } from "../../durable-objects/destinations/destination-object";
import type { AlarmPort } from "../../durable-objects/alarm-port";
import { clockOffset, fireVirtualAlarm, moveClock, virtualAlarm } from "./virtual-time";

const CALLS_KEY = "test:calls";

export class TestDestinationObject extends DestinationObject {
  private offset: number | undefined;

  protected override now(): number {
    this.offset ??= clockOffset(this.ctx.storage);
    return Date.now() + this.offset;
  }

  protected override get alarms(): AlarmPort {
    return virtualAlarm(this.ctx.storage);
  }

  /** Counts acquire calls (see `acquires`). */
  override async acquire(destination: string, runId: string, ticket: string) {
    const { kv } = this.ctx.storage;
    kv.put(CALLS_KEY, (kv.get<number>(CALLS_KEY) ?? 0) + 1);
    return super.acquire(destination, runId, ticket);
  }

  /** How many times a run asked this destination for a slot. */
  async acquires(): Promise<number> {
    return this.ctx.storage.kv.get<number>(CALLS_KEY) ?? 0;
  }

  /** Fires the alarm now, whatever its time; false when none is set. */
  async fireAlarm(): Promise<boolean> {
    return fireVirtualAlarm(this.alarms, () => this.alarm());
  }

  /** When the alarm is set for, on this object's clock; null when none is. */
  async alarmAt(): Promise<number | null> {
    return this.alarms.get();
  }

  /** Moves this object's clock `ms` forward; returns the new time. */
  async advanceClock(ms: number): Promise<number> {
    this.offset = moveClock(this.ctx.storage, ms);
    return this.now();
  }

  /** The leases held: which run's call (ticket) holds a slot, until when. */
  async leaseRows(): Promise<{ runId: string; ticket: string; expiresAt: number }[]> {
    return this.ctx.storage.sql
      .exec<{ runId: string; ticket: string; expiresAt: number }>(
        "SELECT run_id AS runId, ticket, expires_at AS expiresAt FROM leases ORDER BY granted_at, ticket",
      )
      .toArray();
  }
}
