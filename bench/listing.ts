/**
 * `npm run bench:listing`: the listing goals of SPEC 8.2, measured through `wrangler dev` the
 * way users run it (bench/README.md says how):
 *   - the newest 50 of 10,000 runs of one API key: ≤ 50 ms, and the same however many runs
 *     another key has (each key has its own RunIndex);
 *   - a run's status change shows in listings within 2 s.
 * Prints a markdown table and writes bench/listing-results.json. Not part of `npm test`.
 *
 * Environment: BENCH_LISTING_RUNS (default 10000) runs for the measured key, and as many for
 * another key; BENCH_LISTING_PORT (default 8900; the inspector takes the next port).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { mapLimit, sleep } from "../scripts/chaos/util.ts";

const ROOT = resolve(import.meta.dirname, "..");
const RUNS = Number(process.env.BENCH_LISTING_RUNS ?? 10_000);
const PORT = Number(process.env.BENCH_LISTING_PORT ?? 8900);
const BASE = `http://127.0.0.1:${PORT}`;
const KEYS = { measured: "bench-key-a", other: "bench-key-b", lag: "bench-key-c" };
const SAMPLES = 50;
const log = (msg: string) => process.stderr.write(`${msg}\n`);

async function call(key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Runs that wait at the risk gate: created, listed, and nothing else happens to them. */
async function createRuns(key: string, n: number, label: string): Promise<number> {
  const t0 = performance.now();
  let done = 0;
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    16,
    async (i) => {
      await call(key, "POST", "/v1/runs", {
        name: `bench-${i % 7}`,
        tags: { bench: label, shard: String(i % 10) },
        config: { requireApprovalForRisk: "high" },
        steps: [{ id: "gate", tool: "pass", risk: "high" }],
      });
      if (++done % 2000 === 0) log(`  ${label}: ${done}/${n} runs created`);
    },
  );
  return n / ((performance.now() - t0) / 1000);
}

/** Client wall time of `GET path` as `key`, `SAMPLES` times after 5 warm-ups: median and p95. */
async function timeGet(key: string, path: string, check: (body: any) => void) {
  const ms: number[] = [];
  for (let i = 0; i < SAMPLES + 5; i++) {
    const t0 = performance.now();
    const body = await call(key, "GET", path);
    const t = performance.now() - t0;
    check(body);
    if (i >= 5) ms.push(t);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)]!, p95: ms[Math.floor(ms.length * 0.95)]! };
}

const newest50 = (body: any) => {
  if (body.runs.length !== 50 || body.next === null) throw new Error("expected a full page");
};

/**
 * How long after a run's own GET shows it `completed` the listing shows it too: runs of one
 * short `wait` step, each polled (run and listing) every 10 ms.
 */
async function listingLag(runs = 10): Promise<number[]> {
  const lags: number[] = [];
  for (let i = 0; i < runs; i++) {
    const tag = `lag-${i}-${Date.now()}`;
    const { runId } = await call(KEYS.lag, "POST", "/v1/runs", {
      tags: { lag: tag },
      steps: [{ id: "w", tool: "wait", params: { ms: 50 } }],
    });
    let runDone: number | null = null;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(10)) {
      const [run, page] = await Promise.all([
        call(KEYS.lag, "GET", `/v1/runs/${runId}?view=summary`),
        call(KEYS.lag, "GET", `/v1/runs?tag=lag:${tag}`),
      ]);
      const now = performance.now();
      if (run.status === "completed") runDone ??= now;
      if (page.runs[0]?.status === "completed") {
        lags.push(now - (runDone ?? now));
        break;
      }
    }
  }
  return lags.sort((a, b) => a - b);
}

function startWranglerDev(dir: string) {
  const args = [
    join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    ...["--config", join(ROOT, "wrangler.toml"), "--persist-to", join(dir, "state")],
    ...["--ip", "127.0.0.1", "--port", String(PORT), "--inspector-port", String(PORT + 1)],
    ...["--var", `API_KEYS:${Object.values(KEYS).join(",")}`, "--var", "RUNS_PER_MINUTE:0"],
    "--show-interactive-dev-session=false",
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: "ignore",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", CI: "1" },
  });
  const stop = () => {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // already gone
    }
  };
  process.on("exit", stop);
  return stop;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "edgestep-bench-listing-"));
  const stop = startWranglerDev(dir);
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`${BASE}/healthz`).catch(() => null))?.ok) break;
      if (i > 600) throw new Error("wrangler dev did not start");
      await sleep(200);
    }
    const loadBefore = loadavg()[0]!;
    log(
      `bench:listing: ${RUNS} runs for one key, then ${RUNS} for another (wrangler dev on ${BASE})`,
    );
    const createRate = await createRuns(KEYS.measured, RUNS, "measured");
    const alone = await timeGet(KEYS.measured, "/v1/runs?limit=50", newest50);
    const filtered = await timeGet(
      KEYS.measured,
      "/v1/runs?limit=50&status=waiting&tag=shard:3&name=bench-3",
      () => {},
    );
    const stats = await timeGet(KEYS.measured, "/v1/stats", (b) => {
      if (b.total !== RUNS) throw new Error(`stats: ${JSON.stringify(b)}`);
    });
    await createRuns(KEYS.other, RUNS, "other");
    const beside = await timeGet(KEYS.measured, "/v1/runs?limit=50", newest50);
    const lags = await listingLag();
    const loadAfter = loadavg()[0]!;
    const lagMedian = lags[Math.floor(lags.length / 2)]!;
    const lagMax = lags[lags.length - 1]!;
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    const rows = [
      [
        "newest 50 of the key's runs (median / p95)",
        `${f(alone.median)} / ${f(alone.p95)}`,
        "≤ 50 ms",
        alone.median <= 50,
      ],
      [
        `the same, with ${RUNS} runs of another key`,
        `${f(beside.median)} / ${f(beside.p95)}`,
        "≈ the above",
        beside.median <= Math.max(50, alone.median * 1.5),
      ],
      ["50 filtered by status, tag and name (median)", f(filtered.median), "", ""],
      ["GET /v1/stats (median)", f(stats.median), "", ""],
      [
        "status change → listing (median / max of 10)",
        `${f(lagMedian)} / ${f(lagMax)}`,
        "≤ 2000 ms",
        lagMax <= 2000,
      ],
      ["runs created per second (16 clients)", createRate.toFixed(0), "", ""],
    ];
    console.log("| metric | value | goal | met? |\n| --- | --- | --- | --- |");
    for (const [m, v, g, ok] of rows)
      console.log(`| ${m} | ${v} | ${g} | ${ok === "" ? "" : ok ? "yes" : "NO"} |`);
    console.log(
      `\n${cpus().length} cores, load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after; ${SAMPLES} samples each`,
    );
    const results = {
      runs: RUNS,
      alone,
      beside,
      filtered,
      stats,
      lags,
      createRate,
      loadBefore,
      loadAfter,
      cores: cpus().length,
      at: new Date().toISOString(),
    };
    writeFileSync(
      join(ROOT, "bench/listing-results.json"),
      `${JSON.stringify(results, null, 2)}\n`,
    );
  } finally {
    stop();
    await sleep(500);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
