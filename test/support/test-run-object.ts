/**
 * TestRunObject: the RunObject the workers tests run, with its clock substituted through
 * RunObject's `now()` seam: `Date.now()` plus an offset kept in storage, so a test can move a
 * run's clock forward (a retention that ends in 30 days) instead of rewriting times in SQL.
 */
import { RunObject } from "../../durable-objects/run-object";

const CLOCK_KEY = "test:clock-offset";

export class TestRunObject extends RunObject {
  /** The clock's offset from `Date.now()`, read from storage once per instance. */
  private clockOffset: number | undefined;

  protected override now(): number {
    this.clockOffset ??= this.ctx.storage.kv.get<number>(CLOCK_KEY) ?? 0;
    return Date.now() + this.clockOffset;
  }

  /** Moves the run's clock `ms` forward; returns the new time. */
  async advanceClock(ms: number): Promise<number> {
    if (!(ms >= 0)) throw new RangeError(`the clock only moves forward, not by ${ms} ms`);
    this.clockOffset = (this.ctx.storage.kv.get<number>(CLOCK_KEY) ?? 0) + ms;
    this.ctx.storage.kv.put(CLOCK_KEY, this.clockOffset);
    return this.now();
  }
}
