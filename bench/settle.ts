/**
 * Waits for an idle machine before a case: the previous case's work (e.g. (5)'s 200 runs on
 * both servers) goes on after its last poll, and a case measured meanwhile reports what no
 * user running it alone would see. Idle: the machine's CPUs at most `maxBusy` busy over one
 * second (Linux /proc/stat), or `timeoutMs` passed; elsewhere it returns at once.
 */
import { existsSync, readFileSync } from "node:fs";
import { sleep } from "./client.ts";
import { rotate } from "./stats.ts";

const STAT = "/proc/stat";

/** [busy, total] jiffies of all CPUs. */
function cpuTimes(): [number, number] {
  const fields = readFileSync(STAT, "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = fields[3]! + (fields[4] ?? 0); // idle + iowait
  return [total - idle, total];
}

/** Resolves when the machine is idle; gives how long that took and how busy it was last. */
export async function settle(
  maxBusy = 0.15,
  timeoutMs = 60_000,
  /** How long each look at the CPUs lasts. */
  sampleMs = 1_000,
): Promise<{ waitedMs: number; busy: number | null }> {
  if (!existsSync(STAT)) return { waitedMs: 0, busy: null };
  const t0 = performance.now();
  let busy = 1;
  while (performance.now() - t0 < timeoutMs) {
    const [b0, t0j] = cpuTimes();
    await sleep(sampleMs);
    const [b1, t1j] = cpuTimes();
    busy = (b1 - b0) / Math.max(1, t1j - t0j);
    if (busy <= maxBusy) break;
  }
  return { waitedMs: performance.now() - t0, busy };
}

/**
 * Runs a round's contenders one after the other, in an order that rotates with `round` (so
 * none always goes first), each on an idle machine: a server goes on digesting a run after
 * its client saw it end (Workflows' local traces, a batch's 200 runs), and a contender
 * measured meanwhile reports what nobody running it alone would see.
 */
export async function inTurns(jobs: readonly (() => Promise<void>)[], round: number) {
  for (const job of rotate(jobs, round)) {
    await settle(0.15, 60_000, 500);
    await job();
  }
}
