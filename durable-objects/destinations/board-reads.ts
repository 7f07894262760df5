/**
 * Reads of the pause board (SPEC 10) shared through the location's cache (the Cache API), so
 * that the one PauseBoard is read at most about once a second per Cloudflare location, not once
 * a second by every isolate that is making calls: with many isolates a single object every one
 * of them polled would be a hot spot. A copy names when it was read; a reader takes the time
 * since off each pause's remaining duration and reads the board itself once the copy is
 * FRESH_MS old. Where the cache keeps nothing (a `workers.dev` host) or fails, every read goes
 * to the board, as it would without the cache.
 */
import type { PauseNotice } from "./pause-board";

/** A shared copy is used while younger than this. */
export const FRESH_MS = 1_000;

/** The cache key of the board's copy (never fetched: a name in the cache only). */
const COPY_KEY = "https://pause-board.edgestep.invalid/current";

interface Copy {
  /** When the board was read (the reader's clock). */
  at: number;
  notices: PauseNotice[];
}

/** `read` (the board's own read) behind the location's `cache`, on `clock`. */
export function sharedBoardRead(
  read: () => Promise<PauseNotice[]>,
  cache: Cache,
  clock: () => number,
): () => Promise<PauseNotice[]> {
  return async () => {
    const copy = await cachedCopy(cache);
    const age = copy ? clock() - copy.at : Infinity;
    if (copy && age >= 0 && age < FRESH_MS) return aged(copy.notices, age);
    const notices = await read();
    await keep(cache, { at: clock(), notices });
    return notices;
  };
}

/** The pauses of a copy `age` ms old, as they stand now (those that ended are dropped). */
function aged(notices: readonly PauseNotice[], age: number): PauseNotice[] {
  return notices
    .filter((n) => n.remainingMs > age)
    .map((n) => ({ destination: n.destination, remainingMs: n.remainingMs - age }));
}

async function cachedCopy(cache: Cache): Promise<Copy | undefined> {
  try {
    const hit = await cache.match(COPY_KEY);
    return hit ? ((await hit.json()) as Copy) : undefined;
  } catch (err) {
    console.error("edgestep: reading the pause board's shared copy failed", err);
    return undefined;
  }
}

async function keep(cache: Cache, copy: Copy): Promise<void> {
  const maxAge = Math.ceil(FRESH_MS / 1000);
  const headers = { "content-type": "application/json", "cache-control": `max-age=${maxAge}` };
  try {
    await cache.put(COPY_KEY, new Response(JSON.stringify(copy), { headers }));
  } catch (err) {
    console.error("edgestep: keeping the pause board's shared copy failed", err);
  }
}
