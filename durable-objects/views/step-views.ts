/**
 * The `steps` of the full status document as JSON text, kept per step in memory and rebuilt
 * only for the steps whose rows changed since the last read (storage tells which), in one
 * query. Polling a run's full status then costs a join of cached strings, not a rebuild of
 * every step: reads do not slow the run they watch (SPEC 6.1).
 */
import type { StepViewRecord } from "../../src/engine/records";
import { stepView } from "../../src/engine/status";
import type { Checkpoint } from "../storage/checkpoint";

export class StepViews {
  private json: string[] = [];
  /** Steps whose rows changed since their text was built; null: possibly any. */
  private stale: Set<number> | null = null;

  /** Step `index`'s row (or its items) changed; null: possibly any. */
  changed(index: number | null): void {
    if (index === null) this.stale = null;
    else this.stale?.add(index);
  }

  /** The steps array, as JSON text. */
  text(c: Checkpoint): string {
    const total = c.plan.read().steps.length;
    if (this.stale === null || this.json.length !== total || this.stale.size > total / 4) {
      this.rebuild(c, c.steps.views());
      this.stale = new Set();
    } else if (this.stale.size > 0) {
      this.rebuild(c, c.steps.viewsOf([...this.stale]));
      this.stale.clear();
    }
    return `[${this.json.join(",")}]`;
  }

  private rebuild(c: Checkpoint, rows: readonly StepViewRecord[]): void {
    const steps = c.plan.read().steps;
    const fanOuts = rows.some((s) => steps[s.index]!.forEach !== undefined);
    const items = fanOuts ? c.items.counts() : undefined;
    for (const s of rows) {
      const view = stepView(s);
      const counts = items?.get(s.index);
      this.json[s.index] = JSON.stringify(counts ? { ...view, items: counts } : view);
    }
  }
}
