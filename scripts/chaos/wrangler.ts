/** How the chaos run invokes wrangler: its binary, its environment, and the `wrangler dev` arguments. */
import { execFile } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT, type ChaosOptions } from "./options.ts";

export const WRANGLER_BIN = join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/** No metrics, no colours, no prompts; debug logs stay in the run's temporary folder. */
export function wranglerEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
    CI: "1",
    WRANGLER_LOG_PATH: join(dir, "wrangler-debug-logs"),
  };
}

/**
 * wrangler.toml for serving the prebuilt bundle from another folder: without `[build]` (the
 * dry-run has built the console already, and its command runs in the config's folder) and
 * with the console's assets copied into `dir`: `wrangler dev` watches its assets directory,
 * and reloading the Worker (ending every object) when something else rebuilds the checkout's
 * console (another test, a developer) would look like a crash no kill explains.
 */
function bundleConfig(sourceDir: string, dir: string): string {
  return readFileSync(join(sourceDir, "wrangler.toml"), "utf8")
    .replace(/^\[build\]\n(?:(?!\[).*\n)*/m, "")
    .replace(/^directory = "(.*)"$/m, (_, d: string) => {
      const assets = join(dir, "assets");
      cpSync(join(sourceDir, d), assets, { recursive: true });
      return `directory = ${JSON.stringify(assets)}`;
    });
}

/**
 * Prepares what every (re)start of `wrangler dev` serves and returns its arguments. In `bundle` mode
 * the Worker is built once (`wrangler deploy --dry-run`) with a copy of wrangler.toml, so every
 * restart runs the same code and edits to the checkout during a run don't reload it.
 */
export async function devServerArgs(o: ChaosOptions, dir: string): Promise<string[]> {
  let args: string[];
  if (o.mode === "bundle") {
    await promisify(execFile)(
      process.execPath,
      [WRANGLER_BIN, "deploy", "--dry-run", "--outdir", join(dir, "bundle")],
      { cwd: o.sourceDir, env: wranglerEnv(dir), maxBuffer: 16 * 1024 * 1024 },
    );
    writeFileSync(join(dir, "wrangler.toml"), bundleConfig(o.sourceDir, dir));
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
  return args;
}
