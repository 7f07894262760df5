/**
 * Which run an `Idempotency-Key` names (SPEC 6, 8.3). The same owner and key name the same
 * run, so a retried POST finds it. A deleted run's id is never used again: the key then names
 * its next generation (an id derived from owner, key and generation), past every deleted one.
 * The first generation's tombstone remembers the newest generation created, so a key reused
 * across many deletions is still found in a few lookups.
 */
import type { Env } from "../env";
import { idempotentRunId } from "../ids";
import { runObject } from "./run-stub";

export interface KeyTarget {
  runId: string;
  generation: number;
  /** The status of the run the key names, or null when it names none yet. */
  status: string | null;
}

/** The run `key` names for `owner` (or the id its next run takes), looking from generation `from`. */
export async function resolveIdempotencyKey(
  env: Env,
  owner: string,
  key: string,
  from = 0,
): Promise<KeyTarget> {
  for (let generation = from; ;) {
    const runId = await idempotentRunId(owner, key, generation);
    const found = await runObject(env, runId).lookup(owner);
    if (found.type === "run") return { runId, generation, status: found.status };
    if (found.type === "none") return { runId, generation, status: null };
    generation = Math.max(generation + 1, found.latestGeneration);
  }
}

/** A run was created at `generation` (> 0): the key's first, deleted, generation remembers it. */
export async function noteGeneration(
  env: Env,
  owner: string,
  key: string,
  generation: number,
): Promise<void> {
  const first = await idempotentRunId(owner, key, 0);
  // Only a hint: without it, the next lookup probes the deleted generations one by one.
  await runObject(env, first)
    .noteGeneration(generation)
    .catch((err: unknown) => console.warn("edgestep: idempotency hint not stored", err));
}
