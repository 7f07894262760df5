/**
 * `npm run bench:engine`'s options (environment variables: see run.ts), its progress log on
 * stderr, and the warm-up plus measured rounds that every case repeats.
 */
import { median } from "./scheduler-bench.ts";

export const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 5));
export const SEED = Number(process.env.BENCH_SEED ?? 42);
export const STORAGE = process.env.BENCH_DO_STORAGE === "tmpfs" ? "tmpfs" : "disk";
export const REF = process.env.BENCH_REF || undefined;
/** Steps of case (d)'s plan. */
export const BIG = 10_000;

export const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** Median of one field over samples. */
export const med = <T>(xs: readonly T[], f: (x: T) => number) => median(xs.map(f));

/** One warm-up round (discarded), then REPEATS measured rounds. */
export async function rounds<T>(label: string, fn: (round: number) => Promise<T>): Promise<T[]> {
  await fn(-1);
  const out: T[] = [];
  for (let i = 0; i < REPEATS; i++) {
    out.push(await fn(i));
    log(`  ${label}: round ${i + 1}/${REPEATS}`);
  }
  return out;
}
