/**
 * The `steps` of the full status document as JSON text, kept per step in memory and rebuilt
 * only for the steps whose rows changed since the last read (storage tells which). Polling a
 * run's full status then costs a join of cached strings, not a rebuild of every step: reads
 * do not slow the run they watch (SPEC 6.1).
 */
import type { StepRecord } from "../../src/engine/records";
import { stepView } from "../../src/engine/status";
import type { Checkpoint } from "../storage/checkpoint";

export class StepViews {
  private json: (string | undefined)[] = [];
  private stale = 0;

  /** Step `index`'s row (or its items) changed; null: possibly any. */
  changed(index: number | null): void {
    if (index === null) {
      this.json = [];
      this.stale = Number.POSITIVE_INFINITY;
    } else if (this.json[index] !== undefined) {
      this.json[index] = undefined;
      this.stale++;
    }
  }

  /** The steps array, as JSON text. */
  text(c: Checkpoint): string {
    const total = c.plan.read().steps.length;
    if (this.json.length !== total || this.stale > total / 4) this.rebuildAll(c, total);
    else this.rebuildStale(c);
    return `[${this.json.join(",")}]`;
  }

  private rebuildAll(c: Checkpoint, total: number): void {
    const items = c.items.counts();
    this.json = new Array<string>(total);
    for (const s of c.steps.all()) this.json[s.index] = entry(s, items.get(s.index));
    this.stale = 0;
  }

  private rebuildStale(c: Checkpoint): void {
    const steps = c.plan.read().steps;
    for (let i = 0; i < this.json.length && this.stale > 0; i++) {
      if (this.json[i] !== undefined) continue;
      const items = steps[i]!.forEach === undefined ? undefined : c.items.counts(i).get(i);
      this.json[i] = entry(c.steps.get(i)!, items);
      this.stale--;
    }
    this.stale = 0;
  }
}

function entry(s: StepRecord, items: { total: number } | undefined): string {
  const view = stepView(s);
  return JSON.stringify(items ? { ...view, items } : view);
}
