/**
 * `npm run bench:engine`: engine figures, NOT what users see (`npm run bench` measures that,
 * through `wrangler dev` with a polling client). Boots edgestep and a Worker of hand-written
 * baselines in one local workerd through Miniflare (direct sockets, sparse polling), next to an
 * in-process loopback upstream, and measures (bench/README.md says exactly how):
 *   (b) makespan of 50 parallel 100 ms `http` steps, over 100 ms (server clock), with baselines
 *   (c) makespan of a seeded random 200-step DAG, over its critical path, with baselines
 *   (d) submitting a 10,000-step plan, and pure scheduler cost per step at 100/1k/10k steps
 * Prints a markdown table and writes bench/engine/results.json. Not part of `npm test`.
 *
 * Environment: BENCH_REPEATS (default 5), BENCH_SEED (default 42), BENCH_REF (measure that git
 * revision instead of the working tree), BENCH_DO_STORAGE=tmpfs (Durable Object storage on
 * /dev/shm: a diagnostic, not the default).
 *
 * This file is the entry point: setup and teardown. The cases are in dag-case.ts (b, c) and
 * big-plan-case.ts (d), the report in report.ts, the options in options.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startUpstream } from "../../test/upstream/server.ts";
import { bigPlanCase } from "./big-plan-case.ts";
import { fanOutCase, randomDagCase } from "./dag-case.ts";
import { Api, boot, buildWorker, loadEngine } from "./harness.ts";
import { REF, STORAGE, log } from "./options.ts";
import { report } from "./report.ts";
import { sourceTree } from "../source-tree.ts";

process.env.WRANGLER_SEND_METRICS = "false";

async function main(): Promise<void> {
  const began = performance.now();
  const loadBefore = loadavg()[0]!;
  const tmp = mkdtempSync(join(tmpdir(), "edgestep-bench-"));
  const upstream = await startUpstream(0);
  let booted: Awaited<ReturnType<typeof boot>> | undefined;
  try {
    log(
      `building ${REF ? `revision ${REF}` : "the working tree"}: the Worker (wrangler deploy --dry-run) and the engine bundle (esbuild)...`,
    );
    const tree = sourceTree(tmp, REF);
    const out = join(tmp, "out");
    buildWorker(tree, out);
    const engine = await loadEngine(tree, out);
    log(`booting workerd (Miniflare; Durable Object storage on ${STORAGE})...`);
    booted = await boot(tree, out, STORAGE);
    const api = new Api(booted.edgestep);
    const b = await fanOutCase(api, booted.bench, upstream);
    const c = await randomDagCase(api, booted.bench, upstream);
    const d = await bigPlanCase(api, engine);
    await report({ b, c, d }, began, loadBefore);
  } finally {
    await booted?.mf.dispose();
    booted?.cleanup();
    await upstream.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
