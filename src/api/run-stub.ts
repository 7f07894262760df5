/**
 * The Durable Object stub of a run, by run id. Deriving an object's id from its name hashes
 * the name on every call; the ids of recent runs are kept per isolate (an id is a plain
 * value, unlike a stub, which belongs to its request).
 */
import { settings, type Env } from "../env";

const MAX_IDS = 10_000;
const ids = new Map<string, DurableObjectId>();

export function runObject(env: Env, runId: string) {
  // A run's object parses the settings in its constructor, and an error thrown there reaches
  // the Worker as an opaque one: a bad variable is answered here, by name (`misconfigured`).
  settings(env);
  let id = ids.get(runId);
  if (id === undefined) {
    id = env.RUNS.idFromName(runId);
    if (ids.size >= MAX_IDS) ids.delete(ids.keys().next().value!);
    ids.set(runId, id);
  }
  return env.RUNS.get(id);
}
