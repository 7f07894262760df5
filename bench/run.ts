/**
 * `npm run bench`: edgestep measured the way users run it. It starts the Worker with
 * `wrangler dev` (local, state in a temp dir), Cloudflare Workflows doing the same work under a
 * second `wrangler dev` (bench/workflows/), and the loopback upstream in a Node process of its
 * own (bench/upstream.ts); a client then submits plans and polls `GET /v1/runs/:id` like a
 * user's program. bench/README.md says exactly how each figure is measured.
 *
 * Prints a markdown table (metric | edgestep | Workflows | ratio | goal | met?) and breakdown
 * notes, and writes every sample to bench/results.json. Options: environment variables
 * (options.ts). Not part of `npm test`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { bigChainCase, summaryCase } from "./cases/big-chain.ts";
import { chainCase } from "./cases/chain.ts";
import { concurrentCase } from "./cases/concurrent.ts";
import { dagCase, pollingCase } from "./cases/dag.ts";
import { fanoutCase } from "./cases/fanout.ts";
import { listingCase } from "./cases/listing.ts";
import { Edgestep, UpstreamLog, Workflows } from "./client.ts";
import type { CaseResult, Ctx, Row } from "./context.ts";
import { readOptions, type CaseName, type Options } from "./options.ts";
import { markdown, writeResults } from "./report.ts";
import { atExit, upstreamProcess, wranglerDev, type Service } from "./services.ts";
import { settle } from "./settle.ts";
import { warmServers } from "./warm-up.ts";
import { BENCH_DIR, ROOT, gitCommit, sourceTree } from "./source-tree.ts";

process.env.WRANGLER_SEND_METRICS = "false";

const CASES: Record<CaseName, (ctx: Ctx) => Promise<CaseResult>> = {
  chain: chainCase,
  fanout: fanoutCase,
  dag: dagCase,
  polling: pollingCase,
  concurrent: concurrentCase,
  bigchain: bigChainCase,
  summary: summaryCase,
  listing: listingCase,
};
const WITH_WORKFLOWS = new Set<CaseName>(["chain", "fanout", "dag", "concurrent"]);

/** The Worker's variables for the bench, on top of wrangler.toml's. */
const VARS = {
  MAX_STEPS_PER_PLAN: "10000",
  // A 10,000-step plan is about 0.8 MiB; room to spare.
  MAX_PLAN_BYTES: String(8 * 1024 * 1024),
  // The bench creates thousands of runs a minute from one caller.
  RUNS_PER_MINUTE: "0",
};

const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** The 1-minute load average, sampled every 2 s while the bench runs. */
function loadSampler() {
  const samples = [loadavg()[0]!];
  const timer = setInterval(() => samples.push(loadavg()[0]!), 2_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    samples.push(loadavg()[0]!);
    return {
      before: samples[0]!,
      after: samples.at(-1)!,
      mean: samples.reduce((a, b) => a + b, 0) / samples.length,
      max: Math.max(...samples),
    };
  };
}

/** Starts every service at once; if one fails, stops the others and fails. */
async function startAll(starts: Promise<Service | null>[]): Promise<(Service | null)[]> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed === undefined) return settled.map((s) => (s as PromiseFulfilledResult<Service>).value);
  for (const s of settled) if (s.status === "fulfilled") await s.value?.stop();
  throw failed.reason;
}

function makeContext(
  opts: Options,
  tmp: string,
  tree: string,
  es: Service,
  wf: Service | null,
  upstream: Service & { control: string },
): Ctx {
  const upstreamLog = new UpstreamLog(upstream.control);
  return {
    opts,
    es: new Edgestep(es.url),
    wf: wf === null ? null : new Workflows(wf.url),
    upstreamUrl: upstream.url,
    upstream: upstreamLog,
    log,
    async rounds(label, fn) {
      const out = [];
      for (let round = -opts.warmup; round < opts.repeats; round++) {
        await upstreamLog.reset();
        const t0 = performance.now();
        const sample = await fn(round);
        if (round >= 0) out.push(sample);
        const which = round < 0 ? "warm-up" : `round ${round + 1}/${opts.repeats}`;
        log(`  ${label}: ${which} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      }
      return out;
    },
    async startEdgestep(vars) {
      const s = await edgestepDev(opts, tmp, tree, "edgestep-listing", opts.portBase + 6, vars);
      return { url: s.url, stop: () => s.stop() };
    },
  };
}

function edgestepDev(
  opts: Options,
  tmp: string,
  tree: string,
  name: string,
  port: number,
  vars: Record<string, string> = {},
): Promise<Service> {
  return wranglerDev({
    name,
    config: opts.floor ? join(BENCH_DIR, "floor", "wrangler.toml") : join(tree, "wrangler.toml"),
    port,
    inspectorPort: port + 1,
    persistTo: join(tmp, `${name}-state`),
    vars: { ...VARS, ...vars },
    registry: join(tmp, "registry"),
    verbose: opts.verbose,
  });
}

async function runCases(ctx: Ctx) {
  const rows: Row[] = [];
  const notes: string[] = [];
  const data: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const name of ctx.opts.only) {
    const quiet = await settle();
    log(
      `${name}... (after ${(quiet.waitedMs / 1000).toFixed(1)} s for an idle machine${quiet.busy === null ? "" : `: ${Math.round(quiet.busy * 100)} % busy`})`,
    );
    try {
      const result = await CASES[name](ctx);
      rows.push(...result.rows);
      notes.push(...result.notes);
      data[name] = result.data;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`${name} FAILED: ${message}`);
      errors[name] = message;
      rows.push({
        metric: `${name}: failed`,
        edgestep: message.split("\n")[0]!.slice(0, 160),
        workflows: "—",
        ratio: "—",
        goal: "—",
        met: false,
      });
    }
  }
  return { rows, notes, data, errors };
}

async function main(): Promise<void> {
  const opts = readOptions();
  const began = performance.now();
  const load = loadSampler();
  const tmp = mkdtempSync(join(tmpdir(), "edgestep-bench-"));
  atExit(() => rmSync(tmp, { recursive: true, force: true }));
  const services: Service[] = [];
  try {
    const tree = sourceTree(tmp, opts.ref);
    const p = opts.portBase;
    const needWorkflows = opts.workflows && opts.only.some((c) => WITH_WORKFLOWS.has(c));
    log(
      `starting wrangler dev for edgestep${needWorkflows ? " and for the Workflows" : ""}, and the upstream (ports ${p}-${p + 7})...`,
    );
    const [upstream, es, wf] = (await startAll([
      upstreamProcess(p + 4, p + 5, opts.verbose),
      edgestepDev(opts, tmp, tree, "edgestep", p),
      needWorkflows
        ? wranglerDev({
            name: "workflows",
            config: join(BENCH_DIR, "workflows", "wrangler.toml"),
            port: p + 2,
            inspectorPort: p + 3,
            persistTo: join(tmp, "workflows-state"),
            vars: {},
            registry: join(tmp, "registry"),
            verbose: opts.verbose,
          })
        : Promise.resolve(null),
    ])) as [Service & { control: string }, Service, Service | null];
    services.push(upstream, es, ...(wf ? [wf] : []));
    log(
      `ready: ${services.map((s) => `${s.name} in ${s.startupSeconds.toFixed(1)} s`).join(", ")}`,
    );

    const ctx = makeContext(opts, tmp, tree, es, wf, upstream);
    await warmServers(ctx, opts.serverWarmup);
    const { rows, notes, data, errors } = await runCases(ctx);
    const loadAverage = load();
    const wrangler = (
      JSON.parse(readFileSync(join(ROOT, "node_modules", "wrangler", "package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    const header =
      `edgestep bench: \`wrangler dev\` ${wrangler} (local), median of ${opts.repeats} round(s) after ${opts.warmup} warm-up (servers warmed by ${opts.serverWarmup} runs of each kind); ` +
      `polls every ${opts.pollMs} ms (${opts.pollView} view); ${cpus().length} CPUs, load average ${loadAverage.before.toFixed(1)} → ${loadAverage.after.toFixed(1)} ` +
      `(mean ${loadAverage.mean.toFixed(1)}, max ${loadAverage.max.toFixed(1)}); Node ${process.version}; ${opts.floor ? "bench/floor in edgestep's place" : opts.ref ? `revision ${opts.ref}` : "working tree"}`;
    const table = markdown(rows);
    const benchSeconds = Math.round((performance.now() - began) / 100) / 10;
    const file = await writeResults(opts.floor ? "results-floor.json" : "results.json", {
      generatedAt: new Date().toISOString(),
      environment: {
        node: process.version,
        wrangler,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? null,
        loadAverage,
        source: opts.ref
          ? { ref: opts.ref, commit: gitCommit(opts.ref) }
          : { ref: "working tree", commit: gitCommit("HEAD") },
        startupSeconds: Object.fromEntries(services.map((s) => [s.name, s.startupSeconds])),
      },
      options: opts,
      table: rows,
      markdown: table,
      notes,
      errors,
      cases: data,
      benchSeconds,
    });
    console.log(
      `\n${header}\n\n${table}\n\n${notes.join("\n")}\n\nwrote ${file} (${benchSeconds} s)`,
    );
    if (Object.keys(errors).length > 0) process.exitCode = 1;
  } finally {
    for (const s of services.reverse()) await s.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
