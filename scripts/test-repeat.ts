/**
 * `npm run test:repeat -- [N] [vitest options]`: runs the test suite (`vitest run`) N times in
 * a row and stops at the first failing run, naming it. N is the first argument when it is a
 * number, else $TEST_REPEAT, else 10; the other arguments go to vitest (e.g. `--project workers`
 * or a test file). Each run's output goes to a log file; a failing run's log is printed.
 *
 *   npm run test:repeat                          # the whole suite, 10 times
 *   npm run test:repeat -- 20 --project workers  # the workers tests, 20 times
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const VITEST = join(ROOT, "node_modules/vitest/vitest.mjs");

function parseArgs(argv: string[]): { runs: number; vitestArgs: string[] } {
  const [first, ...rest] = argv;
  if (first !== undefined && /^\d+$/.test(first)) return { runs: Number(first), vitestArgs: rest };
  const fromEnv = process.env.TEST_REPEAT;
  if (fromEnv !== undefined && !/^\d+$/.test(fromEnv))
    throw new Error(`TEST_REPEAT must be a whole number, not "${fromEnv}"`);
  return { runs: fromEnv === undefined ? 10 : Number(fromEnv), vitestArgs: argv };
}

/** Runs `vitest run` once with its output in `logPath`; resolves to its exit code. */
function runOnce(vitestArgs: string[], logPath: string): Promise<number> {
  const log = createWriteStream(logPath);
  const child = spawn(process.execPath, [VITEST, "run", ...vitestArgs], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (code, signal) => log.end(() => done(code ?? (signal ? 128 : 1))));
  });
}

/** The lines of a vitest log that say what failed and the totals. */
function summary(text: string): string {
  const lines = text.split("\n");
  const failures = lines.findIndex((l) => /Failed Tests|FAIL /.test(l));
  const tail = lines.slice(failures === -1 ? -40 : failures);
  return tail.slice(0, 200).join("\n");
}

async function main(): Promise<void> {
  const { runs, vitestArgs } = parseArgs(process.argv.slice(2));
  if (runs < 1) throw new Error("the number of runs must be at least 1");
  const logs = await mkdtemp(join(tmpdir(), "edgestep-test-repeat-"));
  const what = vitestArgs.length > 0 ? `vitest run ${vitestArgs.join(" ")}` : "vitest run";
  console.log(`${what}, ${runs} times; logs in ${logs}`);
  for (let k = 1; k <= runs; k++) {
    const logPath = join(logs, `run-${k}.log`);
    const started = Date.now();
    const code = await runOnce(vitestArgs, logPath);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (code !== 0) {
      console.log(summary(await readFile(logPath, "utf8")));
      console.error(`run ${k} of ${runs} FAILED (exit ${code}, ${seconds} s); its log: ${logPath}`);
      process.exitCode = 1;
      return;
    }
    console.log(`run ${k} of ${runs} passed (${seconds} s)`);
  }
  console.log(`all ${runs} runs passed`);
}

await main();
