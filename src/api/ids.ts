/** Run ids: 128 random bits, or derived from an Idempotency-Key scoped to its owner. */
const PREFIX = "run_";
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function randomRunId(): string {
  return PREFIX + hex(crypto.getRandomValues(new Uint8Array(16)));
}

/** The same owner and key always name the same run, so a retried POST finds it. */
export async function idempotentRunId(owner: string, key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${owner}\n${key}`),
  );
  return PREFIX + hex(new Uint8Array(digest).slice(0, 16));
}
