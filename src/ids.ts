/**
 * Identifiers: run ids (128 random bits, or derived from an Idempotency-Key scoped to its
 * owner) and callback tokens (which name their run, so the Worker can route them).
 */
const PREFIX = "run_";
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function randomRunId(): string {
  return PREFIX + hex(crypto.getRandomValues(new Uint8Array(16)));
}

/**
 * The same owner and key always name the same run, so a retried POST finds it. `generation`
 * counts the key's deleted runs (SPEC 8.3: a deleted run's id is never used again, and the
 * key then names a new run); generation 0 is the id keys have always had.
 */
export async function idempotentRunId(owner: string, key: string, generation = 0): Promise<string> {
  const name = generation === 0 ? `${owner}\n${key}` : `${owner}\n${key}\n${generation}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(name));
  return PREFIX + hex(new Uint8Array(digest).slice(0, 16));
}

/** `cb_<run id hex>_<256 random bits>`: the Worker finds the run from the token, nobody can guess one. */
export function newCallbackToken(runId: string): string {
  return `cb_${runId.slice(PREFIX.length)}_${hex(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export function runIdOfToken(token: string): string | null {
  const m = /^cb_([0-9a-f]{32})_[0-9a-f]{64}$/.exec(token);
  return m ? `${PREFIX}${m[1]}` : null;
}
