/**
 * The Durable Object stub of a run, by run id. Deriving an object's id from its name hashes
 * the name on every call; the ids of recent runs are kept per isolate (an id is a plain
 * value, unlike a stub, which belongs to its request).
 */
import type { Env } from "../env";

const MAX_IDS = 10_000;
const ids = new Map<string, DurableObjectId>();

export function runObject(env: Env, runId: string) {
  let id = ids.get(runId);
  if (id === undefined) {
    id = env.RUNS.idFromName(runId);
    if (ids.size >= MAX_IDS) ids.delete(ids.keys().next().value!);
    ids.set(runId, id);
  }
  return env.RUNS.get(id);
}
