/** What a chaos run can be told (`npm run chaos` flags map onto these), and its defaults. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** This checkout: the default source to build and serve, and where node_modules come from. */
export const ROOT = resolve(import.meta.dirname, "../..");

export interface ChaosOptions {
  runs: number;
  kills: number;
  seed: number;
  /** Steps per run, inclusive range. */
  minSteps: number;
  maxSteps: number;
  /** Upstream call duration, inclusive range (random per call, from seed, Idempotency-Key and attempt). */
  minCallMs: number;
  maxCallMs: number;
  /** config.maxParallel per run, inclusive range. */
  minParallel: number;
  maxParallel: number;
  /** A kill comes this long (uniform in range) after the previous (re)start. */
  minKillAfterMs: number;
  maxKillAfterMs: number;
  /**
   * After the last restart, send no request at all for this long, so only restored alarms can
   * resume the runs the kills interrupted (default: the lease, the 2 s retry cap, and 3 s more).
   */
  quietMs?: number;
  /** Then poll: how long to wait for every run to finish before counting it lost. */
  finalWaitMs: number;
  /** An interrupted call "was in flight at a kill" when it started before the kill and was answered at most this long before it. */
  graceMs: number;
  /** `bundle` (default): wrangler dev serves a bundle built once; `source`: plain `wrangler dev` on the checkout. */
  mode: "bundle" | "source";
  /** The checkout to build and serve (its src/, durable-objects/, wrangler.toml); node_modules come from this project. */
  sourceDir: string;
  /** Keep the temporary folder (persisted state, wrangler logs) even when everything passed. */
  keep: boolean;
  log: (line: string) => void;
  /** For experiments: runs while the server is down after each kill (e.g. to tamper with the state). */
  afterKill?: (stateDir: string, kill: number) => void | Promise<void>;
}

export const DEFAULTS: ChaosOptions = {
  runs: 50,
  kills: 5,
  seed: 1,
  minSteps: 10,
  maxSteps: 30,
  minCallMs: 50,
  maxCallMs: 300,
  minParallel: 2,
  maxParallel: 6,
  minKillAfterMs: 500,
  maxKillAfterMs: 12_000,
  finalWaitMs: 180_000,
  graceMs: 1_000,
  mode: "bundle",
  sourceDir: ROOT,
  keep: false,
  log: (line) => process.stderr.write(`${line}\n`),
};

/** The options with every default filled in, including the quiet period derived from the lease. */
export function withDefaults(partial: Partial<ChaosOptions>): ChaosOptions & { quietMs: number } {
  const o = { ...DEFAULTS, ...partial };
  return { ...o, quietMs: o.quietMs ?? leaseMs(o.sourceDir) + 5_000 };
}

/**
 * The Durable Object lease (LEASE_MS in durable-objects/alarm.ts) of the checkout under test:
 * while attempts are in flight the run's alarm points this far ahead, so after a kill the run
 * sleeps up to this long. Read from the source because `--source-dir` may serve another checkout.
 */
function leaseMs(sourceDir: string): number {
  try {
    const source = readFileSync(join(sourceDir, "durable-objects/alarm.ts"), "utf8");
    const match = /LEASE_MS\s*=\s*([\d_]+)/.exec(source);
    if (match) return Number(match[1]!.replaceAll("_", ""));
  } catch {
    // fall through
  }
  return 10_000;
}
