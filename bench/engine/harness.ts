/**
 * `npm run bench:engine`'s setup: build the Worker as `wrangler deploy` would, bundle the pure
 * engine for in-process use, boot edgestep and the baselines Worker in one local workerd
 * (Miniflare, direct sockets), and a small client for edgestep's API.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare, convertV4MiniflareOptions, type Json } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import type * as Engine from "./pure-engine.ts";
import { RUN_FINAL, sleep, type RunDoc } from "../client.ts";
import type { BenchPlan } from "../plans.ts";
import { ROOT } from "../source-tree.ts";

/** bench/engine/ */
export const ENGINE_DIR = dirname(fileURLToPath(import.meta.url));

const STEP_FINISHED = new Set(["succeeded", "failed", "skipped", "cancelled"]);

/** The full status document (the engine bench reads every step's times). */
export interface RunView extends RunDoc {
  steps: {
    id: string;
    index: number;
    status: string;
    startedAt: string | null;
    endedAt: string | null;
    error?: unknown;
  }[];
}

/** `wrangler deploy --dry-run --outdir`: the exact bundle a deploy would upload. */
export function buildWorker(tree: string, outdir: string): void {
  execFileSync(
    join(ROOT, "node_modules", ".bin", "wrangler"),
    ["deploy", "--dry-run", "--outdir", outdir],
    {
      cwd: tree,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

/** The pure engine (bench/engine/pure-engine.ts, resolved against `tree`) bundled by esbuild and imported here. */
export async function loadEngine(tree: string, outdir: string): Promise<typeof Engine> {
  const outfile = join(outdir, "engine.mjs");
  const resolveDir = join(tree, "bench", "engine");
  mkdirSync(resolveDir, { recursive: true });
  await build({
    stdin: {
      contents: readFileSync(join(ENGINE_DIR, "pure-engine.ts"), "utf8"),
      resolveDir,
      loader: "ts",
      sourcefile: "pure-engine.ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "error",
  });
  return (await import(pathToFileURL(outfile).href)) as typeof Engine;
}

export interface Booted {
  mf: Miniflare;
  /** Direct URLs (no Miniflare entry proxy) of the two Workers. */
  edgestep: string;
  bench: string;
  /** Removes what boot created besides Miniflare's own temporary files. */
  cleanup(): void;
}

/**
 * Boots edgestep and the baselines Worker in one workerd. Durable Object storage goes to Miniflare's temporary
 * directory on disk, or to /dev/shm with `storage: "tmpfs"` (a diagnostic: no real fsync).
 */
export async function boot(
  tree: string,
  outdir: string,
  storage: "disk" | "tmpfs",
): Promise<Booted> {
  // wrangler.toml supplies edgestep's options (compatibility, Durable Objects from the
  // migrations, [vars]) through wrangler's own converter, as test/e2e does.
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(tree, "wrangler.toml"));
  const { modulesRules: _, ...fromConfig } = workerOptions;
  const vars = (workerOptions.bindings ?? {}) as Record<string, Json>;
  // (wrangler types the options loosely.)
  const compatibilityDate = fromConfig.compatibilityDate as string | undefined;
  const compatibilityFlags = fromConfig.compatibilityFlags as string[] | undefined;
  const persist = storage === "tmpfs" ? mkdtempSync("/dev/shm/edgestep-bench-") : undefined;
  const direct = [{ host: "127.0.0.1", port: 0 }];
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      log: new Log(LogLevel.WARN),
      cf: false,
      ...(persist !== undefined && { isolatedResourcePersistencePath: persist }),
      workers: [
        {
          ...fromConfig,
          name: "edgestep",
          rootPath: tree,
          scriptPath: join(outdir, "index.js"),
          modules: true,
          modulesRoot: outdir,
          unsafeDirectSockets: direct,
          bindings: {
            ...vars,
            MAX_STEPS_PER_PLAN: "10000",
            MAX_PLAN_BYTES: String(32 * 1024 * 1024),
            // The bench creates dozens of runs a minute from one (anonymous) caller.
            RUNS_PER_MINUTE: "0",
          },
        },
        {
          name: "bench",
          scriptPath: join(ENGINE_DIR, "baselines-worker.js"),
          modules: true,
          modulesRoot: ENGINE_DIR,
          compatibilityDate,
          compatibilityFlags,
          unsafeDirectSockets: direct,
          durableObjects: { PROBE: { className: "DagProbe", useSQLite: true } },
        },
      ],
    }),
  );
  await mf.ready;
  const url = async (name: string) => (await mf.unsafeGetDirectURL(name)).href.replace(/\/$/, "");
  return {
    mf,
    edgestep: await url("edgestep"),
    bench: await url("bench"),
    cleanup: () => {
      if (persist !== undefined) rmSync(persist, { recursive: true, force: true });
    },
  };
}

export class Api {
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  async json<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T }> {
    const res = await fetch(this.base + path, init);
    return { status: res.status, body: (await res.json()) as T };
  }

  /** POST /v1/runs; `t0` (performance clock) and `wall0` (epoch ms) are taken just before sending. */
  async submit(
    plan: BenchPlan | string,
  ): Promise<{ runId: string; t0: number; wall0: number; acceptedMs: number }> {
    const body = typeof plan === "string" ? plan : JSON.stringify(plan);
    const wall0 = Date.now();
    const t0 = performance.now();
    const res = await this.json<{ runId: string }>("/v1/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const acceptedMs = performance.now() - t0;
    if (res.status !== 202)
      throw new Error(
        `POST /v1/runs answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`,
      );
    return { runId: res.body.runId, t0, wall0, acceptedMs };
  }

  /** Polls GET /v1/runs/:id until the run is final; returns it and when that was first seen. */
  async waitRun(
    runId: string,
    pollMs: number,
    timeoutMs = 60_000,
  ): Promise<{ view: RunView; seenAt: number }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const { body } = await this.json<RunView>(`/v1/runs/${runId}`);
      const seenAt = performance.now();
      if (RUN_FINAL.has(body.status)) return { view: body, seenAt };
      if (seenAt > deadline)
        throw new Error(`run ${runId} still ${body.status} after ${timeoutMs} ms`);
      await sleep(pollMs);
    }
  }

  /** Polls one step (cheap even on a 10,000-step run) until it is finished. */
  async waitStep(
    runId: string,
    stepId: string,
    pollMs: number,
    timeoutMs = 120_000,
  ): Promise<{ status: string; startedAt: string | null }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const { body } = await this.json<{ status: string; startedAt: string | null }>(
        `/v1/runs/${runId}/steps/${stepId}`,
      );
      if (STEP_FINISHED.has(body.status)) return body;
      if (performance.now() > deadline)
        throw new Error(`step ${stepId} of ${runId} still ${body.status} after ${timeoutMs} ms`);
      await sleep(pollMs);
    }
  }
}

export function expectCompleted(view: RunView, what: string): void {
  if (view.status !== "completed") {
    const failed = view.steps.find((s) => s.status === "failed");
    throw new Error(
      `${what}: run ended ${view.status}${failed ? `; step ${failed.id}: ${JSON.stringify(failed.error)}` : ""}`,
    );
  }
}
