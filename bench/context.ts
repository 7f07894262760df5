/** What every case of `npm run bench` gets, and what it gives back. */
import type { Edgestep, UpstreamLog, Workflows } from "./client.ts";
import type { Options } from "./options.ts";

export interface Ctx {
  opts: Options;
  /** edgestep under `wrangler dev`, auth off. */
  es: Edgestep;
  /** The Workflows Worker under its own `wrangler dev`; null with BENCH_WORKFLOWS=0. */
  wf: Workflows | null;
  /** The upstream's base URL, for plans, and its log. */
  upstreamUrl: string;
  upstream: UpstreamLog;
  log(msg: string): void;
  /** Warm-up rounds (round < 0, discarded), then `opts.repeats` measured rounds (0, 1, ...). */
  rounds<T>(label: string, fn: (round: number) => Promise<T>): Promise<T[]>;
  /** Starts a second edgestep (`wrangler dev`) with extra variables, for the listing case. */
  startEdgestep(vars: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }>;
  /** Set by the 10,000-step chain case: a finished 10,000-step run the summary case may read. */
  bigRunId?: string;
}

/** One row of the report's table. */
export interface Row {
  metric: string;
  edgestep: string;
  workflows: string;
  ratio: string;
  goal: string;
  /** null: no goal, or not measured. */
  met: boolean | null;
}

export interface CaseResult {
  rows: Row[];
  /** Breakdown lines printed under the table. */
  notes: string[];
  /** Everything measured, samples included, for results.json. */
  data: unknown;
}

export const NONE = "—";

export const ms = (x: number, digits = 0) => `${x.toFixed(digits)} ms`;
export const sec = (x: number, digits = 2) => `${(x / 1000).toFixed(digits)} s`;
export const kib = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(2)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} B`;
