/** Runs the `edgestep` CLI (bin/edgestep.js) as a user would, in its own Node process. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = resolve(ROOT, "bin/edgestep.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's lines, without the last empty one. */
  lines: string[];
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
}

/** Starts the CLI; `done` resolves when it exits (the test's timeout bounds it). */
export function startCli(args: string[], options: CliOptions = {}): { done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  child.stdin.end(options.stdin ?? "");
  const done = new Promise<CliResult>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      resolveDone({
        code,
        stdout,
        stderr,
        lines: stdout.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1),
      }),
    );
  });
  return { done };
}

export const cli = (args: string[], options?: CliOptions) => startCli(args, options).done;

/** A line with its clock times and durations replaced, so runs can be compared line by line. */
export function normalize(line: string): string {
  return line
    .replace(/\b\d\d:\d\d:\d\d\b/g, "HH:MM:SS")
    .replace(/\b\d+(\.\d+)? (ms|s|min|h)\b/g, "<t>")
    .replace(/run_[0-9a-f]{32}/g, "<run>");
}
