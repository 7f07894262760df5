/**
 * PlanTable (owns `plan_parts`): the run's compiled plan, kept as JSON cut into `plan_parts` rows. A plan
 * (MAX_PLAN_BYTES) may be larger than one Durable Object value may hold, so it is split on
 * write and joined on read. Only a repair (SPEC 9.2) replaces it, so it is read once per change.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import type { Sql } from "./sql";

/** Characters per stored plan part: at most 1 MiB of UTF-8, well under the 2 MB value limit. */
const PLAN_PART_CHARS = 256 * 1024;

/** Cuts `text` into parts of at most `size` characters, never between a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--; // keep the pair together
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

export class PlanTable {
  private cached: CompiledPlan | undefined;

  constructor(private readonly db: Sql) {}

  /** Writes the plan's parts (inside the caller's create transaction). */
  write(plan: CompiledPlan): void {
    splitText(JSON.stringify(plan), PLAN_PART_CHARS).forEach((part, seq) => {
      this.db.run`INSERT INTO plan_parts (seq, part) VALUES (${seq}, ${part})`;
    });
  }

  /** Replaces the plan with its repaired revision (inside the caller's transaction). */
  replace(plan: CompiledPlan): void {
    this.db.run`DELETE FROM plan_parts`;
    this.write(plan);
  }

  /** Caches a plan once its transaction committed (a rolled-back write must not be cached). */
  remember(plan: CompiledPlan): void {
    this.cached = plan;
  }

  /** The run was deleted: nothing is cached any more. */
  forget(): void {
    this.cached = undefined;
  }

  read(): CompiledPlan {
    if (!this.cached) {
      const parts = this.db.all<{ part: string }>`SELECT part FROM plan_parts ORDER BY seq`;
      if (parts.length === 0) throw new Error("no run stored");
      const plan = JSON.parse(parts.map((p) => p.part).join("")) as CompiledPlan;
      plan.tags ??= {}; // stored before plans had tags (schema v2)
      this.cached = plan;
    }
    return this.cached;
  }
}
