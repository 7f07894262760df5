/**
 * Boots the Worker the way a user deploys it, for the e2e tests (plain Node):
 *  1. `wrangler deploy --dry-run --outdir <dir>` bundles src/index.ts as `wrangler deploy` would
 *     (once per test run, by test/e2e/global-setup.ts; again for another environment);
 *  2. wrangler.toml supplies the Miniflare options (compatibility date and flags, the RUNS
 *     Durable Object on SQLite from its migrations, vars), through wrangler's own converter;
 *  3. Miniflare runs the bundle in workerd on a real port, with real alarms.
 * TOOLS is wrangler.toml's demo registry with its upstream address replaced by `upstreamUrl`;
 * `overrides` sets more variables (e.g. `API_KEYS`); `env` picks a wrangler.toml environment
 * (e.g. `production`), built and configured as `wrangler deploy --env <env>` would.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Miniflare, convertV4MiniflareOptions, type Json } from "miniflare";
import { afterAll, beforeAll, inject } from "vitest";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { startUpstream, type Upstream } from "../upstream/server.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const DEMO_UPSTREAM = "http://127.0.0.1:8788";

export interface BootedWorker {
  /** The Worker's base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Bundles the Worker for `env` with wrangler (the console's assets too, by wrangler.toml's
 * [build]) into a fresh temporary directory, which it returns.
 */
export async function buildBundle(env?: string): Promise<string> {
  const outdir = await mkdtemp(join(tmpdir(), "edgestep-e2e-"));
  const wrangler = join(ROOT, "node_modules/wrangler/bin/wrangler.js");
  try {
    await promisify(execFile)(
      process.execPath,
      [wrangler, "deploy", "--dry-run", "--outdir", outdir, ...(env ? ["--env", env] : [])],
      {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1" },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (err) {
    await rm(outdir, { recursive: true, force: true });
    throw err;
  }
  return outdir;
}

/**
 * The bundle for `env`: the default environment's is built once for the whole run (by the
 * global setup; shared, read-only), another environment's for the caller, which removes it.
 */
async function bundleFor(env?: string): Promise<{ outdir: string; owned: boolean }> {
  if (env === undefined) return { outdir: inject("e2eBundleDir"), owned: false };
  return { outdir: await buildBundle(env), owned: true };
}

export async function bootWorker(
  upstreamUrl: string,
  overrides: Record<string, string> = {},
  env?: string,
): Promise<BootedWorker> {
  const { outdir, owned } = await bundleFor(env);
  const removeBundle = () => (owned ? rm(outdir, { recursive: true, force: true }) : undefined);
  try {
    const scriptPath = join(outdir, "index.js");
    // The bundle is one ES module, so wrangler's module rules (for unbundled imports) do not apply.
    const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml"), env);
    const { modulesRules: _, ...fromConfig } = workerOptions;
    // (wrangler types the options loosely: `bindings` are its [vars].)
    const vars = workerOptions.bindings as Record<string, Json> | undefined;
    const tools = String(vars?.TOOLS ?? "{}").replaceAll(DEMO_UPSTREAM, upstreamUrl);
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        ...fromConfig,
        name: "edgestep",
        rootPath: ROOT,
        scriptPath,
        modules: true,
        modulesRoot: outdir,
        bindings: { ...vars, TOOLS: tools, ...overrides },
        host: "127.0.0.1",
        port: 0,
      }),
    );
    let url: string;
    try {
      url = (await mf.ready).origin;
    } catch (err) {
      await mf.dispose().catch(() => {});
      throw err;
    }
    return {
      url,
      async stop() {
        await mf.dispose();
        await removeBundle();
      },
    };
  } catch (err) {
    await removeBundle();
    throw err;
  }
}

/** The loopback upstream and the Worker of one test file, set once its beforeAll ran. */
export interface E2eSetup {
  upstream: Upstream;
  worker: BootedWorker;
}

/**
 * Starts the loopback upstream and boots the Worker before the file's tests (with the
 * variables `overrides` derives from the upstream's URL), and stops both after them.
 */
export function bootForFile(
  overrides: (upstreamUrl: string) => Record<string, string> = () => ({}),
): E2eSetup {
  const setup = {} as E2eSetup;
  beforeAll(async () => {
    setup.upstream = await startUpstream();
    setup.worker = await bootWorker(setup.upstream.url, overrides(setup.upstream.url));
  });
  afterAll(async () => {
    await setup.worker?.stop();
    await setup.upstream?.close();
  });
  return setup;
}
