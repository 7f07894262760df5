/** `npm run bench`'s options, all from environment variables (bench/README.md lists them). */

export const CASES = [
  "chain",
  "fanout",
  "dag",
  "polling",
  "concurrent",
  "bigchain",
  "summary",
  "listing",
] as const;
export type CaseName = (typeof CASES)[number];

export interface Options {
  /** Measured rounds per case, after `warmup` discarded ones. */
  repeats: number;
  warmup: number;
  /** Runs of each kind each server serves before the first case (bench/warm-up.ts). */
  serverWarmup: number;
  /** Seed of the random DAG. */
  seed: number;
  /** How long the client sleeps between a status answer and its next request. */
  pollMs: number;
  /** `GET /v1/runs/:id` (full) or `?view=summary` for every poll but the 10,000-step chain's. */
  pollView: "full" | "summary";
  only: CaseName[];
  /** Run the Cloudflare Workflows side (a second `wrangler dev`). */
  workflows: boolean;
  /** First of the ten ports used: edgestep, Workflows, upstream, listing instance, inspectors. */
  portBase: number;
  /** Measure this git revision instead of the working tree. */
  ref: string | undefined;
  /** Measure bench/floor (a minimal Durable Object executor) in edgestep's place. */
  floor: boolean;
  concurrentRuns: number;
  /** Runs of the listed key in the listing case, and how many are created at once. */
  listRuns: number;
  listConcurrency: number;
  /** Echo the child processes' output. */
  verbose: boolean;
}

function int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer in ${min}..${max}, got "${raw}"`);
  return n;
}

function only(): CaseName[] {
  const raw = process.env.BENCH_ONLY;
  if (raw === undefined || raw.trim() === "") return [...CASES];
  const names = raw.split(",").map((s) => s.trim());
  const unknown = names.filter((n) => !(CASES as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new Error(`BENCH_ONLY: unknown case ${unknown.join(", ")}; cases: ${CASES.join(", ")}`);
  return CASES.filter((c) => names.includes(c));
}

function flag(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "1" || raw === "true") return true;
  if (raw === "0" || raw === "false") return false;
  throw new Error(`${name} must be 1 or 0, got "${raw}"`);
}

/** The cases bench/floor can run: plans of `http` and `pass` steps without templates. */
const FLOOR_CASES: readonly CaseName[] = ["chain", "fanout", "dag", "polling", "concurrent"];

function floorOnly(cases: readonly CaseName[]): boolean {
  const floor = flag("BENCH_FLOOR", false);
  const other = cases.filter((c) => !FLOOR_CASES.includes(c));
  if (floor && other.length > 0)
    throw new Error(
      `BENCH_FLOOR runs only ${FLOOR_CASES.join(" and ")} (set BENCH_ONLY); not ${other.join(", ")}`,
    );
  return floor;
}

export function readOptions(): Options {
  const view = process.env.BENCH_POLL_VIEW ?? "full";
  if (view !== "full" && view !== "summary")
    throw new Error(`BENCH_POLL_VIEW must be full or summary, got "${view}"`);
  const cases = only();
  return {
    repeats: int("BENCH_REPEATS", 5, 1),
    warmup: int("BENCH_WARMUP", 1, 0),
    serverWarmup: int("BENCH_SERVER_WARMUP", 20, 0, 1_000),
    seed: int("BENCH_SEED", 42, 0, 2 ** 32 - 1),
    pollMs: int("BENCH_POLL_MS", 25, 0, 60_000),
    pollView: view,
    only: cases,
    workflows: flag("BENCH_WORKFLOWS", true),
    portBase: int("BENCH_PORT", 8800, 1024, 65_525),
    ref: process.env.BENCH_REF || undefined,
    floor: floorOnly(cases),
    concurrentRuns: int("BENCH_CONCURRENT_RUNS", 200, 1, 10_000),
    listRuns: int("BENCH_LIST_RUNS", 10_000, 50, 100_000),
    listConcurrency: int("BENCH_LIST_CONCURRENCY", 16, 1, 256),
    verbose: flag("BENCH_VERBOSE", false),
  };
}
