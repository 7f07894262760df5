/**
 * Chaos test machinery, shared by `npm run chaos` (scripts/chaos.ts) and its short version in
 * `npm test` (test/e2e/chaos.test.ts).
 *
 * runChaos():
 *  1. starts the loopback upstream in this process; plans call its `/work` endpoint, which takes
 *     50-300 ms (derived from seed, Idempotency-Key and attempt) and answers a value derived from
 *     the Idempotency-Key, and logs each call's start and end;
 *  2. bundles the Worker once (`wrangler deploy --dry-run`) and serves it with
 *     `wrangler dev <bundle> --no-bundle --persist-to <tmp>/state` in its own process group
 *     (every restart runs the same code, and edits to the checkout during a run don't reload it);
 *  3. submits the runs (random DAGs and chains of `http` steps, seeded) in batches spread over the
 *     seconds before each kill, under an Idempotency-Key so a submission cut off by a kill is
 *     repeated safely; at random moments it SIGKILLs the whole process group (wrangler and its
 *     workerd children), checks the processes are gone and the port refuses connections, and
 *     restarts `wrangler dev` on the same persist folder;
 *  4. after the last restart, sends no request for `quietMs` (lease + retry cap + margin), so only
 *     alarms restored from storage can resume the interrupted runs; a run that moves again only
 *     once polled counts as stuck;
 *  5. waits (bounded) for every run to finish and checks: every run `completed`; every step's `data`
 *     is the upstream's answer to that step (key, value, attempt and the templated input); every
 *     upstream call was recorded as an attempt first; a key was called more than once only for an
 *     attempt the run recorded as failed (`interrupted` ones must have been in flight at a kill),
 *     and never after its success was recorded; runs still unfinished at the deadline are lost
 *     (stuck: no alarm brought them back), with their alarm state read from the persisted SQLite.
 */
import { mulberry32 } from "../bench/plans.ts";
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { closeSync, copyFileSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify, isDeepStrictEqual } from "node:util";
import {
  startUpstream,
  workAnswer,
  workValue,
  type LoggedCall,
  type Upstream,
} from "../test/upstream/server.ts";

export const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER_BIN = join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/**
 * The Durable Object lease (LEASE_MS in durable-objects/iteration.ts): while attempts are in flight
 * the run's alarm points this far ahead, so after a kill the run sleeps up to this long.
 */
export function leaseMs(sourceDir = ROOT): number {
  try {
    const source = readFileSync(join(sourceDir, "durable-objects/iteration.ts"), "utf8");
    const match = /LEASE_MS\s*=\s*([\d_]+)/.exec(source);
    if (match) return Number(match[1]!.replaceAll("_", ""));
  } catch {
    // fall through
  }
  return 10_000;
}
const FINAL = new Set(["completed", "partial", "failed", "cancelled"]);

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

export interface KillRecord {
  n: number;
  /** Date.now() just before SIGKILL. */
  at: number;
  /** When every killed process was seen gone (a dying process may still send for a few ms after `at`). */
  goneAt: number;
  /** Since the server (re)started. */
  afterReadyMs: number;
  /** Upstream `/work` calls still unanswered at the kill. */
  inFlightCalls: number;
  /** Processes killed (wrangler's node and its workerd children, among others). */
  processes: string[];
  /** From SIGKILL until every process of the group was gone and the port refused connections. */
  downMs: number;
  /** From the restart until /healthz answered. */
  restartMs: number;
}

export interface Finding {
  runId: string;
  stepId?: string;
  problem: string;
  detail?: unknown;
}

export interface ChaosReport {
  ok: boolean;
  options: Omit<ChaosOptions, "log" | "afterKill">;
  runs: number;
  steps: number;
  succeededSteps: number;
  kills: KillRecord[];
  /** Runs not finished at the deadline (stuck: no alarm brought them back), or that vanished. */
  lost: Finding[];
  /**
   * Runs the last kill interrupted that made no progress during the quiet period and moved again
   * only once polled: their alarm did not survive the restart.
   */
  stuckUntilPolled: Finding[];
  /** Interrupted attempts retried during the chaos or quiet period, before any request touched their run again. */
  retriedByAlarm: number;
  /** Finished runs that did not end `completed`. */
  notCompleted: Finding[];
  /** Steps whose `data` is not the upstream's answer to that step, or whose call carried wrong input. */
  wrongData: Finding[];
  /** Upstream calls beyond the first for a key. */
  duplicates: number;
  duplicatesInFlightAtKill: number;
  /** Retries of an attempt the run recorded as failed for another reason (timeout, network...). */
  duplicatesAfterError: number;
  unexplained: Finding[];
  upstreamCalls: number;
  interruptedAttempts: number;
  /** Longest time between an interrupted call's answer and the kill that lost it (ms; negative: answered after). */
  maxAnswerToKillMs: number | null;
  timing: {
    totalMs: number;
    buildMs: number;
    startMs: number[];
    chaosMs: number;
    quietMs: number;
    drainMs: number;
    verifyMs: number;
  };
  stateDir: string | null;
  summary: string[];
}

// ---------------------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------------------

const between = (rand: () => number, min: number, max: number) =>
  min + Math.floor(rand() * (max - min + 1));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

/** Runs `fn` over `items`, at most `limit` at once. */
async function mapLimit<T, R>(
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

// ---------------------------------------------------------------------------------------
// Processes: wrangler dev in its own process group
// ---------------------------------------------------------------------------------------

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  cmd: string;
}

/** Every process on the machine, from /proc (Linux). */
function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      } catch {
        // gone meanwhile
      }
      out.push({
        pid: Number(name),
        state: rest[0]!,
        ppid: Number(rest[1]),
        pgrp: Number(rest[2]),
        cmd,
      });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** The live (non-zombie) processes of a group, plus every live descendant of its leader. */
function family(leader: number): ProcInfo[] {
  const all = processes().filter((p) => p.state !== "Z");
  const members = new Map(all.filter((p) => p.pgrp === leader).map((p) => [p.pid, p]));
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const stack = [leader];
  while (stack.length > 0) {
    for (const child of byParent.get(stack.pop()!) ?? []) {
      if (!members.has(child.pid)) members.set(child.pid, child);
      stack.push(child.pid);
    }
  }
  return [...members.values()];
}

function shortCmd(cmd: string): string {
  if (cmd.includes("workerd")) return "workerd";
  if (cmd.includes("esbuild")) return "esbuild";
  if (cmd.includes("wrangler")) return "wrangler";
  return cmd.split(" ")[0]?.split("/").pop() ?? "?";
}

async function answers(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Refuses connections (as opposed to answering, or accepting and hanging). */
async function refuses(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return false;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    return code === "ECONNREFUSED" || code === "ECONNRESET";
  }
}

/** Process groups started here and not yet stopped: SIGKILLed if this process exits without stopping them. */
const liveGroups = new Set<number>();
process.on("exit", () => {
  for (const leader of liveGroups) {
    try {
      process.kill(-leader, "SIGKILL");
    } catch {
      // gone
    }
  }
});

export class DevServer {
  readonly url: string;
  private readonly dir: string;
  private readonly port: number;
  private readonly args: string[];
  private child: ChildProcess | undefined;
  private starts = 0;
  private readonly live = new Set<number>();

  constructor(dir: string, port: number, args: string[]) {
    this.dir = dir;
    this.port = port;
    this.args = args;
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts `wrangler dev` in a new process group; resolves once /healthz answers. Returns how long that took. */
  async start(timeoutMs = 120_000): Promise<number> {
    const t0 = Date.now();
    const n = this.starts++;
    const logFile = join(this.dir, `wrangler-${n}.log`);
    const fd = openSync(logFile, "a");
    const inspectorPort = await freePort();
    const child = spawn(
      process.execPath,
      [
        WRANGLER_BIN,
        "dev",
        ...this.args,
        "--ip",
        "127.0.0.1",
        "--port",
        String(this.port),
        "--inspector-port",
        String(inspectorPort),
      ],
      {
        cwd: this.dir,
        detached: true,
        stdio: ["ignore", fd, fd],
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: "false",
          NO_COLOR: "1",
          CI: "1",
          WRANGLER_LOG_PATH: join(this.dir, "wrangler-debug-logs"),
          WRANGLER_REGISTRY_PATH: join(this.dir, "registry"),
        },
      },
    );
    closeSync(fd);
    this.child = child;
    const pid = child.pid!;
    this.live.add(pid);
    liveGroups.add(pid);
    let exit: string | null = null;
    child.once("exit", (code, signal) => {
      exit = `code ${code} signal ${signal}`;
    });
    const deadline = t0 + timeoutMs;
    for (;;) {
      if (exit !== null) {
        this.live.delete(pid);
        liveGroups.delete(pid);
        throw new Error(
          `wrangler dev exited (${exit}) before /healthz answered; log: ${logFile}\n${tail(logFile)}`,
        );
      }
      if (await answers(`${this.url}/healthz`)) return Date.now() - t0;
      if (Date.now() > deadline)
        throw new Error(
          `wrangler dev did not answer /healthz within ${timeoutMs} ms; log: ${logFile}\n${tail(logFile)}`,
        );
      await sleep(100);
    }
  }

  /**
   * SIGKILLs the process group (and any descendant that left it), then waits until every one of
   * those processes is gone and the port refuses connections. Returns the processes killed.
   */
  async kill(): Promise<{ at: number; goneAt: number; processes: string[]; downMs: number }> {
    const child = this.child;
    if (!child?.pid) throw new Error("wrangler dev is not running");
    const leader = child.pid;
    const victims = family(leader);
    const at = Date.now();
    try {
      process.kill(-leader, "SIGKILL");
    } catch {
      // the group is already gone
    }
    for (const p of victims) {
      if (p.pgrp === leader) continue;
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    const pids = new Set(victims.map((p) => p.pid));
    for (const deadline = Date.now() + 15_000; ;) {
      const left = processes().filter((p) => pids.has(p.pid) && p.state !== "Z");
      if (left.length === 0) break;
      if (Date.now() > deadline)
        throw new Error(
          `processes survived SIGKILL: ${left.map((p) => `${p.pid} ${p.cmd}`).join("; ")}`,
        );
      await sleep(5);
    }
    const goneAt = Date.now();
    for (const deadline = Date.now() + 15_000; !(await refuses(`${this.url}/healthz`));) {
      if (Date.now() > deadline)
        throw new Error(`port ${this.port} still accepts connections after the kill`);
      await sleep(20);
    }
    this.live.delete(leader);
    liveGroups.delete(leader);
    this.child = undefined;
    if (!victims.some((p) => p.cmd.includes("workerd"))) {
      throw new Error(
        `no workerd process was found in wrangler's process group (${victims.map((p) => p.cmd).join("; ")})`,
      );
    }
    return {
      at,
      goneAt,
      processes: victims.map((p) => `${p.pid} ${shortCmd(p.cmd)}`),
      downMs: Date.now() - at,
    };
  }

  /** Stops whatever this object started: SIGTERM to the group, SIGKILL if it lingers. */
  async stop(): Promise<void> {
    for (const leader of this.live) {
      const victims = family(leader);
      try {
        process.kill(-leader, "SIGTERM");
      } catch {
        // gone
      }
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(50)) {
        if (!processes().some((p) => p.pgrp === leader && p.state !== "Z")) break;
      }
      // Whatever survived: the same pid still running the same command (never a reused pid).
      const before = new Map(victims.map((p) => [p.pid, p.cmd]));
      for (const p of processes()) {
        if (p.state === "Z" || before.get(p.pid) !== p.cmd) continue;
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    for (const leader of this.live) liveGroups.delete(leader);
    this.live.clear();
    this.child = undefined;
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

// ---------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------

export interface ChaosStep {
  id: string;
  deps: number[];
  /** The query every call of this step must carry (templates resolved), given the run id. */
  query(runId: string): URLSearchParams;
}

export interface ChaosPlan {
  name: string;
  shape: "chain" | "dag";
  steps: ChaosStep[];
  document: unknown;
}

export function makePlan(
  rand: () => number,
  index: number,
  upstreamUrl: string,
  o: ChaosOptions,
): ChaosPlan {
  const n = between(rand, o.minSteps, o.maxSteps);
  const shape = rand() < 0.3 ? "chain" : "dag";
  const steps: ChaosStep[] = [];
  const docSteps: unknown[] = [];
  const timing = { minMs: String(o.minCallMs), maxMs: String(o.maxCallMs), seed: String(o.seed) };
  for (let i = 0; i < n; i++) {
    let deps: number[] = [];
    if (shape === "chain") deps = i > 0 ? [i - 1] : [];
    else if (i > 0) {
      const k = between(rand, 0, Math.min(3, i));
      const pool = Array.from({ length: i }, (_, j) => j);
      for (let d = 0; d < k; d++) deps.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
      deps.sort((a, b) => a - b);
    }
    // The first dependency's value goes into the query through a template: it checks that results
    // read back after a restart are the recorded ones.
    const first = deps[0];
    const query: Record<string, string> = {
      ...timing,
      ...(first !== undefined && { dep: `\${steps.s${first}.data.value}` }),
    };
    docSteps.push({
      id: `s${i}`,
      tool: "http",
      params: { url: `${upstreamUrl}/work`, query },
      ...(deps.length > 0 && { dependsOn: deps.map((d) => `s${d}`) }),
    });
    steps.push({
      id: `s${i}`,
      deps,
      query: (runId) =>
        new URLSearchParams({
          ...timing,
          ...(first !== undefined && { dep: workValue(`${runId}:s${first}`) }),
        }),
    });
  }
  const name = `chaos-${o.seed}-${index}`;
  const document = {
    name,
    config: {
      maxParallel: between(rand, o.minParallel, o.maxParallel),
      // Interrupted attempts count as attempts: leave room for a step caught by several kills.
      retry: { maxRetries: 12, baseDelayMs: 100, maxDelayMs: 2_000 },
    },
    steps: docSteps,
  };
  return { name, shape, steps, document };
}

// ---------------------------------------------------------------------------------------
// API client
// ---------------------------------------------------------------------------------------

interface StepView {
  id: string;
  index: number;
  status: string;
  attempts: number;
  error?: { category: string; message: string; status?: number };
  nextAttemptAt?: string;
}
interface RunView {
  runId: string;
  status: string;
  steps: StepView[];
}
interface StepResult {
  success: boolean;
  data: unknown;
  error?: unknown;
}
interface AttemptLogEntry {
  attempt: number;
  startedAt: string;
  endedAt: string | null;
  category?: string;
  status?: number;
}

class Api {
  private readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  /** GET with retries across restarts (network errors); 404 and other statuses are returned. */
  async get<T>(path: string, deadline = Date.now() + 60_000): Promise<{ status: number; body: T }> {
    for (;;) {
      try {
        const res = await fetch(`${this.base}${path}`, { signal: AbortSignal.timeout(15_000) });
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }

  /** Submits a plan under an Idempotency-Key, so a submission cut off by a kill can be repeated safely. */
  async submit(plan: unknown, key: string, deadline = Date.now() + 60_000): Promise<string> {
    for (;;) {
      try {
        const res = await fetch(`${this.base}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(plan),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await res.json()) as { runId?: string };
        if ((res.status === 202 || res.status === 200) && body.runId) return body.runId;
        if ((res.status === 429 || res.status === 503) && Date.now() < deadline) {
          await sleep(Math.min(5_000, 1_000 * (Number(res.headers.get("retry-after")) || 1)));
          continue;
        }
        throw Object.assign(
          new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(body)}`),
          { fatal: true },
        );
      } catch (err) {
        if ((err as { fatal?: boolean }).fatal || Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The chaos run
// ---------------------------------------------------------------------------------------

interface Submitted {
  index: number;
  plan: ChaosPlan;
  runId: string;
}

export async function runChaos(partial: Partial<ChaosOptions> = {}): Promise<ChaosReport> {
  const o: ChaosOptions = { ...DEFAULTS, ...partial };
  const lease = leaseMs(o.sourceDir);
  o.quietMs ??= lease + 5_000;
  const { log } = o;
  const t0 = Date.now();
  const rand = mulberry32(o.seed);
  const dir = await mkdtemp(join(tmpdir(), "edgestep-chaos-"));
  let upstream: Upstream | undefined;
  let server: DevServer | undefined;
  let ok = false;
  const onSignal = (signal: NodeJS.Signals) => {
    void server?.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    upstream = await startUpstream(0);
    log(
      `chaos: seed ${o.seed}, ${o.runs} runs, ${o.kills} kills; upstream ${upstream.url}; state in ${dir}`,
    );

    // Build once; every (re)start serves the same bundle with the project's wrangler.toml.
    const tb = Date.now();
    let args: string[];
    if (o.mode === "bundle") {
      await promisify(execFile)(
        process.execPath,
        [WRANGLER_BIN, "deploy", "--dry-run", "--outdir", join(dir, "bundle")],
        {
          cwd: o.sourceDir,
          env: {
            ...process.env,
            WRANGLER_SEND_METRICS: "false",
            NO_COLOR: "1",
            CI: "1",
            WRANGLER_LOG_PATH: join(dir, "wrangler-debug-logs"),
          },
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      copyFileSync(join(o.sourceDir, "wrangler.toml"), join(dir, "wrangler.toml"));
      args = [join(dir, "bundle/index.js"), "--no-bundle", "--config", join(dir, "wrangler.toml")];
    } else {
      args = ["--config", join(o.sourceDir, "wrangler.toml")];
    }
    args.push(
      "--persist-to",
      join(dir, "state"),
      "--var",
      "TOOLS:{}",
      "--show-interactive-dev-session=false",
    );
    const buildMs = Date.now() - tb;

    server = new DevServer(dir, await freePort(), args);
    const api = new Api(server.url);
    const startMs = [await server.start()];
    log(
      `chaos: wrangler dev ready on ${server.url} in ${secs(startMs[0]!)} (build ${secs(buildMs)})`,
    );

    const plans = Array.from({ length: o.runs }, (_, i) => makePlan(rand, i, upstream!.url, o));
    const submitted: Submitted[] = [];
    const kills: KillRecord[] = [];
    const tc = Date.now();
    // The runs come in one batch per interval between (re)start and kill, spread over the seconds
    // before the kill, so every kill finds runs in full swing; a later kill may also catch runs
    // recovering from the previous one, and a submission cut off by a kill is repeated after the
    // restart under the same Idempotency-Key.
    const batches: ChaosPlan[][] = Array.from({ length: o.kills + 1 }, () => []);
    plans.forEach((p, i) => batches[Math.floor((i * (o.kills + 1)) / o.runs)]!.push(p));
    const submitErrors: unknown[] = [];
    const submissions: Promise<void>[] = [];
    const submitBatch = async (
      batch: ChaosPlan[],
      firstIndex: number,
      afterMs: number,
      overMs: number,
    ) => {
      await sleep(afterMs);
      for (let j = 0; j < batch.length && submitErrors.length === 0; j++) {
        const index = firstIndex + j;
        const plan = batch[j]!;
        submissions.push(
          api.submit(plan.document, `chaos-${o.seed}-${t0}-${index}`).then(
            (runId) => void submitted.push({ index, plan, runId }),
            (err: unknown) => void submitErrors.push(err),
          ),
        );
        if (j < batch.length - 1) await sleep(overMs / (batch.length - 1));
      }
    };
    const spreading: Promise<void>[] = [];
    let readyAt = Date.now();
    let firstIndex = 0;
    const inFlightCalls = () =>
      upstream!.calls.filter((c) => c.path === "/work" && c.endedAt === undefined).length;
    for (let k = 0; k <= o.kills && submitErrors.length === 0; k++) {
      const batch = batches[k]!;
      const delay = k < o.kills ? between(rand, o.minKillAfterMs, o.maxKillAfterMs) : 1_000;
      // Spread over the last 4 s before the kill (runs take 1-10 s), so it finds them at all stages.
      const window = Math.min(4_000, delay * 0.9);
      spreading.push(submitBatch(batch, firstIndex, delay * 0.95 - window, window));
      firstIndex += batch.length;
      if (k === o.kills) break;
      await sleep(delay);
      // A kill with nothing in flight tests little: give work up to 3 s to show up.
      for (const until = Date.now() + 3_000; inFlightCalls() === 0 && Date.now() < until;)
        await sleep(10);
      const calls = inFlightCalls();
      const killed = await server.kill();
      const afterReadyMs = killed.at - readyAt;
      await o.afterKill?.(join(dir, "state"), k + 1);
      const restartMs = await server.start();
      readyAt = Date.now();
      startMs.push(restartMs);
      kills.push({
        n: k + 1,
        at: killed.at,
        goneAt: killed.goneAt,
        afterReadyMs,
        inFlightCalls: calls,
        processes: killed.processes,
        downMs: killed.downMs,
        restartMs,
      });
      log(
        `chaos: kill #${k + 1} at +${secs(killed.at - tc)} (${secs(afterReadyMs)} after start, ${calls} upstream calls in flight, ` +
          `${submitted.length}/${o.runs} runs submitted; ${killed.processes.length} processes: ${killed.processes.map((p) => p.split(" ")[1]).join(", ")}; ` +
          `down after ${killed.downMs} ms); back in ${secs(restartMs)}`,
      );
    }
    await Promise.all(spreading);
    await Promise.all(submissions);
    if (submitErrors.length > 0) throw submitErrors[0];
    submitted.sort((a, b) => a.index - b.index);
    const chaosMs = Date.now() - tc;

    // Quiet: no request reaches any run, so only alarms restored from storage can resume them.
    const quietLeft = readyAt + o.quietMs! - Date.now();
    if (quietLeft > 0) {
      log(
        `chaos: quiet for ${secs(quietLeft)}: no requests, only restored alarms can resume the interrupted runs`,
      );
      await sleep(quietLeft);
    }
    const drainStart = Date.now();

    // Drain: wait (bounded) for every run to finish.
    const td = Date.now();
    const views = new Map<string, RunView>();
    const vanished = new Set<string>();
    const pending = new Set(submitted.map((s) => s.runId));
    const drainDeadline = Date.now() + o.finalWaitMs;
    let lastLog = Date.now();
    while (pending.size > 0 && Date.now() < drainDeadline) {
      await mapLimit([...pending], 8, async (runId) => {
        const { status, body } = await api.get<RunView>(`/v1/runs/${runId}`);
        if (status === 404) {
          vanished.add(runId);
          pending.delete(runId);
          return;
        }
        if (status !== 200) return;
        views.set(runId, body);
        if (FINAL.has(body.status)) pending.delete(runId);
      });
      if (pending.size === 0) break;
      if (Date.now() - lastLog > 5_000) {
        lastLog = Date.now();
        log(
          `chaos: waiting for ${pending.size} unfinished runs (${secs(drainDeadline - Date.now())} left)`,
        );
      }
      await sleep(500);
    }
    const drainMs = Date.now() - td;

    // Verify.
    const tv = Date.now();
    const report = await verify(
      o,
      api,
      upstream,
      submitted,
      views,
      vanished,
      pending,
      kills,
      drainStart,
      readyAt,
    );
    const verifyMs = Date.now() - tv;
    if (report.lost.length > 0) await describeStuck(join(dir, "state"), report.lost);
    const totalMs = Date.now() - t0;
    const timing = {
      totalMs,
      buildMs,
      startMs,
      chaosMs,
      quietMs: drainStart - tc - chaosMs,
      drainMs,
      verifyMs,
    };
    ok =
      report.lost.length === 0 &&
      report.stuckUntilPolled.length === 0 &&
      report.notCompleted.length === 0 &&
      report.wrongData.length === 0 &&
      report.unexplained.length === 0 &&
      kills.length === o.kills;
    const { log: _, afterKill: __, ...options } = o;
    const full: ChaosReport = {
      ...report,
      ok,
      options,
      kills,
      timing,
      stateDir: ok && !o.keep ? null : dir,
      summary: [],
    };
    full.summary = summarize(full);
    return full;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await server?.stop();
    await upstream?.close();
    if (ok && !o.keep) await rm(dir, { recursive: true, force: true });
  }
}

type Verified = Pick<
  ChaosReport,
  | "runs"
  | "steps"
  | "succeededSteps"
  | "lost"
  | "notCompleted"
  | "wrongData"
  | "duplicates"
  | "duplicatesInFlightAtKill"
  | "duplicatesAfterError"
  | "unexplained"
  | "upstreamCalls"
  | "interruptedAttempts"
  | "maxAnswerToKillMs"
  | "stuckUntilPolled"
  | "retriedByAlarm"
>;

async function verify(
  o: ChaosOptions,
  api: Api,
  upstream: Upstream,
  submitted: Submitted[],
  views: Map<string, RunView>,
  vanished: Set<string>,
  unfinished: Set<string>,
  kills: KillRecord[],
  drainStart: number,
  lastReadyAt: number,
): Promise<Verified> {
  const lost: Finding[] = [];
  const notCompleted: Finding[] = [];
  const wrongData: Finding[] = [];
  const unexplained: Finding[] = [];
  let steps = 0;
  let succeededSteps = 0;
  let duplicates = 0;
  let duplicatesInFlightAtKill = 0;
  let duplicatesAfterError = 0;
  let interruptedAttempts = 0;
  let maxAnswerToKillMs: number | null = null;
  const stuckUntilPolled: Finding[] = [];
  let retriedByAlarm = 0;
  const lastKill = kills.at(-1);

  const work = upstream.calls.filter((c) => c.path === "/work");
  const byKey = new Map<string, LoggedCall[]>();
  for (const c of work)
    byKey.set(c.idempotencyKey ?? "", [...(byKey.get(c.idempotencyKey ?? "") ?? []), c]);
  const known = new Set(submitted.flatMap((s) => s.plan.steps.map((st) => `${s.runId}:${st.id}`)));
  for (const [key, calls] of byKey) {
    if (!known.has(key))
      unexplained.push({
        runId: key.split(":")[0] ?? "?",
        problem: `upstream call with an unknown Idempotency-Key "${key}"`,
        detail: calls.map(callInfo),
      });
  }

  /**
   * The kill an interrupted attempt was in flight at: the first kill after the run recorded the
   * attempt as started (its own clock: the upstream's timestamps lag when this process is busy),
   * provided the upstream had not answered the call long before that kill (an answer may still be
   * on its way, or not yet committed, when the kill lands) and the run recorded the interruption
   * after it.
   */
  const killDuring = (c: LoggedCall, entry: AttemptLogEntry): KillRecord | undefined => {
    const started = Date.parse(entry.startedAt);
    const recorded = entry.endedAt === null ? Infinity : Date.parse(entry.endedAt);
    const kill = kills.find((k) => started <= k.goneAt);
    if (!kill) return undefined;
    const answeredInTime = c.endedAt === undefined || c.endedAt >= kill.at - o.graceMs;
    return answeredInTime && recorded >= kill.at ? kill : undefined;
  };
  /** Calls this long after a kill's processes were gone come from the restarted server (restarts take > 1 s). */
  const AFTER_RESTART_MS = 500;

  await mapLimit(submitted, 4, async ({ runId, plan }) => {
    steps += plan.steps.length;
    if (vanished.has(runId)) {
      lost.push({ runId, problem: "the run vanished: GET /v1/runs/:id answers 404" });
      return;
    }
    const view = views.get(runId);
    if (!view || unfinished.has(runId)) {
      lost.push({
        runId,
        problem: `stuck: still ${view?.status ?? "unknown"} ${secs(Date.now() - lastReadyAt)} after the last restart`,
        detail: view?.steps
          .filter((s) => s.status !== "succeeded")
          .map((s) => ({
            id: s.id,
            status: s.status,
            attempts: s.attempts,
            nextAttemptAt: s.nextAttemptAt,
            error: s.error,
          })),
      });
    } else if (view.status !== "completed") {
      notCompleted.push({
        runId,
        problem: `ended ${view.status}`,
        detail: view.steps
          .filter((s) => s.status !== "succeeded")
          .map((s) => ({ id: s.id, status: s.status, attempts: s.attempts, error: s.error })),
      });
    }
    // Unfinished at the last kill (a call before it, another after it), yet no call between the
    // restart and the end of the quiet period: it moved only once the drain polled it.
    if (lastKill) {
      const runCalls = plan.steps.flatMap((st) => byKey.get(`${runId}:${st.id}`) ?? []);
      const before = runCalls.some((c) => c.at <= lastKill.goneAt + AFTER_RESTART_MS);
      const quiet = runCalls.some(
        (c) => c.at > lastKill.goneAt + AFTER_RESTART_MS && c.at < drainStart,
      );
      const polled = runCalls.filter((c) => c.at >= drainStart).sort((a, b) => a.at - b.at)[0];
      if (before && !quiet && polled) {
        stuckUntilPolled.push({
          runId,
          problem: `no upstream call for ${secs(drainStart - lastKill.goneAt)} after the last kill, then calls again ${polled.at - drainStart} ms after polling began (its alarm was not restored?)`,
        });
      }
    }
    if (!view) return;
    const { status, body: results } = await api.get<StepResult[]>(`/v1/runs/${runId}/results`);
    if (status !== 200 || !Array.isArray(results)) {
      lost.push({ runId, problem: `GET /results answered ${status}` });
      return;
    }
    for (let i = 0; i < plan.steps.length; i++) {
      const step = plan.steps[i]!;
      const key = `${runId}:${step.id}`;
      const calls = (byKey.get(key) ?? []).sort((a, b) => a.at - b.at);
      const sv = view.steps[i];
      const result = results[i];
      const succeeded = sv?.status === "succeeded" && result?.success === true;
      const expectedQuery = step.query(runId);
      if (calls.length > 1) duplicates += calls.length - 1;
      for (const c of calls) {
        if (c.query !== `?${expectedQuery.toString()}`) {
          wrongData.push({
            runId,
            stepId: step.id,
            problem: `call ${c.attempt} carried query ${c.query}, expected ?${expectedQuery.toString()}`,
          });
        }
      }
      if (succeeded) {
        succeededSteps++;
        const expected = workAnswer(key, sv.attempts, expectedQuery);
        if (!isDeepStrictEqual(result.data, expected)) {
          wrongData.push({
            runId,
            stepId: step.id,
            problem: "data is not the upstream's answer to the step's recorded successful attempt",
            detail: { data: result.data, expected },
          });
        }
      }
      // The common case (one call, one attempt) needs no attempt log.
      if (calls.length === 1 && sv?.attempts === 1 && calls[0]!.attempt === 1) continue;
      if (calls.length === 0 && (sv?.attempts ?? 0) === 0) continue;
      const detail = await api.get<{ attemptLog?: AttemptLogEntry[] }>(
        `/v1/runs/${runId}/steps/${step.id}`,
      );
      const attemptLog = detail.body?.attemptLog ?? [];
      interruptedAttempts += attemptLog.filter((a) => a.category === "interrupted").length;
      const logged = new Map(attemptLog.map((a) => [a.attempt, a]));
      const success = succeeded ? sv.attempts : null;
      const seen = new Set<number>();
      for (const c of calls) {
        const attempt = c.attempt ?? -1;
        const entry = logged.get(attempt);
        const problem = (p: string) =>
          unexplained.push({
            runId,
            stepId: step.id,
            problem: p,
            detail: { calls: calls.map(callInfo), attemptLog },
          });
        if (seen.has(attempt)) {
          problem(
            `attempt ${attempt} was sent to the upstream twice (an attempt number was reused)`,
          );
          continue;
        }
        seen.add(attempt);
        if (!entry) {
          problem(
            `the upstream saw attempt ${attempt}, which the run has no record of (an attempt must be recorded before the call)`,
          );
          continue;
        }
        if (success !== null && attempt > success) {
          problem(
            `attempt ${attempt} was executed after the step's success (attempt ${success}) was recorded`,
          );
          continue;
        }
        if (attempt === success) continue;
        // An earlier attempt whose outcome the run recorded as a failure: it was retried.
        if (entry.category === undefined) {
          problem(`attempt ${attempt} has no recorded outcome, yet attempt ${attempt + 1} exists`);
        } else if (entry.category === "interrupted") {
          const kill = killDuring(c, entry);
          if (kill) {
            duplicatesInFlightAtKill++;
            const retry = calls.find((n) => (n.attempt ?? 0) > attempt);
            if (retry && retry.at < drainStart) retriedByAlarm++;
            if (c.endedAt !== undefined)
              maxAnswerToKillMs = Math.max(maxAnswerToKillMs ?? -Infinity, kill.at - c.endedAt);
          } else {
            problem(
              `attempt ${attempt} was recorded as interrupted but was not in flight at any kill`,
            );
          }
        } else {
          duplicatesAfterError++;
        }
      }
      if (success !== null && !seen.has(success)) {
        wrongData.push({
          runId,
          stepId: step.id,
          problem: `the recorded successful attempt ${success} never reached the upstream`,
          detail: { calls: calls.map(callInfo), attemptLog },
        });
      }
    }
  });
  return {
    runs: submitted.length,
    steps,
    succeededSteps,
    lost,
    notCompleted,
    wrongData,
    duplicates,
    duplicatesInFlightAtKill,
    duplicatesAfterError,
    unexplained,
    upstreamCalls: work.length,
    interruptedAttempts,
    maxAnswerToKillMs,
    stuckUntilPolled,
    retriedByAlarm,
  };
}

function callInfo(c: LoggedCall) {
  return {
    attempt: c.attempt,
    at: new Date(c.at).toISOString(),
    endedAt: c.endedAt === undefined ? null : new Date(c.endedAt).toISOString(),
    aborted: c.aborted ?? false,
  };
}

/**
 * For runs that never finished: the alarm each one has, read from the persisted SQLite (read
 * only): the Durable Object's own `_cf_METADATA` alarm and workerd's alarm scheduler (`_cf_ALARM`).
 */
async function describeStuck(stateDir: string, lost: Finding[]): Promise<void> {
  const doDir = join(stateDir, "v3/do/edgestep-RunObject");
  if (!existsSync(doDir)) return;
  // Both tables hold times as integer nanoseconds since the epoch.
  const iso = (ns: unknown) =>
    typeof ns === "bigint" || typeof ns === "number"
      ? new Date(Number(BigInt(ns) / 1_000_000n)).toISOString()
      : null;
  try {
    const { DatabaseSync } = await import("node:sqlite");
    const scheduled = new Map<string, unknown>();
    try {
      const meta = new DatabaseSync(join(doDir, "metadata.sqlite"), { readOnly: true });
      const query = meta.prepare("SELECT actor_id, scheduled_time FROM _cf_ALARM");
      query.setReadBigInts(true);
      for (const row of query.all()) scheduled.set(String(row.actor_id), row.scheduled_time);
      meta.close();
    } catch {
      // no scheduler table
    }
    const wanted = new Map(lost.map((f) => [f.runId, f]));
    for (const file of readdirSync(doDir)) {
      if (!file.endsWith(".sqlite") || file === "metadata.sqlite") continue;
      try {
        const db = new DatabaseSync(join(doDir, file), { readOnly: true });
        const run = db.prepare("SELECT id, status FROM run").get() as
          { id: string; status: string } | undefined;
        const finding = run && wanted.get(run.id);
        if (finding) {
          const query = db.prepare("SELECT value FROM _cf_METADATA WHERE key = 1");
          query.setReadBigInts(true);
          const actor = file.replace(/\.sqlite$/, "");
          finding.detail = {
            steps: finding.detail,
            storedStatus: run.status,
            // The alarm the Durable Object itself stored, and the one workerd's alarm scheduler will fire.
            objectAlarm: iso(query.get()?.value),
            schedulerAlarm: iso(scheduled.get(actor)),
          };
        }
        db.close();
      } catch {
        // unreadable: leave the finding as it is
      }
    }
  } catch {
    // node:sqlite unavailable
  }
}

export function summarize(r: ChaosReport): string[] {
  const dup =
    r.unexplained.length === 0
      ? r.duplicatesAfterError === 0
        ? `duplicate executions: ${r.duplicates} (all in flight at a kill)`
        : `duplicate executions: ${r.duplicates} (${r.duplicatesInFlightAtKill} in flight at a kill, ${r.duplicatesAfterError} retries after a recorded error)`
      : `duplicate executions: ${r.duplicates} (${r.duplicatesInFlightAtKill} in flight at a kill, ${r.duplicatesAfterError} retries after a recorded error), UNEXPLAINED: ${r.unexplained.length}`;
  const t = r.timing;
  const avgStart = t.startMs.reduce((a, b) => a + b, 0) / Math.max(1, t.startMs.length);
  const lines = [
    `runs: ${r.runs}, kills: ${r.kills.length}, lost: ${r.lost.length}, ${dup}`,
    `alarms after restarts: ${r.retriedByAlarm} of ${r.duplicatesInFlightAtKill} interrupted calls were retried before any request touched their run again; ` +
      `runs stuck until polled: ${r.stuckUntilPolled.length}`,
    `steps: ${r.steps} (${r.succeededSteps} succeeded), not completed: ${r.notCompleted.length}, wrong data: ${r.wrongData.length}, upstream calls: ${r.upstreamCalls}, interrupted attempts: ${r.interruptedAttempts}` +
      (r.maxAnswerToKillMs === null
        ? ""
        : `, latest answer before the kill that lost it: ${r.maxAnswerToKillMs} ms`),
    `time: ${secs(t.totalMs)} total (build ${secs(t.buildMs)}, chaos ${secs(t.chaosMs)}, quiet ${secs(t.quietMs)}, drain ${secs(t.drainMs)}, verify ${secs(t.verifyMs)}); ` +
      `wrangler dev ready in ${secs(avgStart)} on average over ${t.startMs.length} starts; seed ${r.options.seed}`,
    ...r.kills.map(
      (k) =>
        `  kill #${k.n}: ${secs(k.afterReadyMs)} after start, ${k.inFlightCalls} calls in flight, ${k.processes.length} processes (${k.processes.map((p) => p.split(" ")[1]).join(", ")}), down in ${k.downMs} ms, back in ${secs(k.restartMs)}`,
    ),
  ];
  const show = (label: string, list: Finding[]) => {
    for (const f of list.slice(0, 10))
      lines.push(
        `  ${label}: ${f.runId}${f.stepId ? ` step ${f.stepId}` : ""}: ${f.problem}${f.detail === undefined ? "" : ` ${JSON.stringify(f.detail)}`}`,
      );
    if (list.length > 10) lines.push(`  ... and ${list.length - 10} more ${label}`);
  };
  show("LOST", r.lost);
  show("STUCK UNTIL POLLED", r.stuckUntilPolled);
  show("NOT COMPLETED", r.notCompleted);
  show("WRONG DATA", r.wrongData);
  show("UNEXPLAINED", r.unexplained);
  if (r.stateDir) lines.push(`state and wrangler logs kept in ${r.stateDir}`);
  lines.push(r.ok ? "chaos: OK" : "chaos: FAILED");
  return lines;
}
