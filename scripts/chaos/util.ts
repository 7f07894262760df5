/** Small helpers the chaos modules share: seeded ranges, waiting, durations, ports, bounded concurrency. */
import { createServer } from "node:net";

/** An integer in [min, max], both inclusive, from the seeded PRNG (so a seed replays the same run). */
export const between = (rand: () => number, min: number, max: number) =>
  min + Math.floor(rand() * (max - min + 1));

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A duration for the log and the summary, e.g. "2.5 s". */
export const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A port nobody listens on right now (the OS picks it), for wrangler dev and its inspector. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

/** Runs `fn` over `items`, at most `limit` at once (so polling and verifying don't flood the server). */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
