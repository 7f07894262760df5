/**
 * `npm run chaos`: is edgestep crash-proof under kill -9? Submits many runs to `wrangler dev`,
 * SIGKILLs its process group (wrangler and workerd) at random moments and restarts it on the same
 * persisted state, then checks every run completed with the upstream's answers, no step ran again
 * after its success was recorded, and `GET /v1/runs` lists every run once with its final status.
 * See scripts/chaos/run-chaos.ts for what exactly is checked.
 *
 *   npm run chaos -- --runs 50 --kills 5 --seed 42
 *   CHAOS_RUNS=50 CHAOS_KILLS=5 CHAOS_SEED=42 npm run chaos
 *
 * Flags (each also as CHAOS_<NAME> in the environment, e.g. CHAOS_FINAL_WAIT_MS):
 *   --runs N            runs to submit (50)            --kills N          kills (5)
 *   --seed N            PRNG seed (random; printed)    --min-steps/--max-steps N   steps per run (10..30)
 *   --min-call-ms/--max-call-ms N   upstream call duration (50..300)
 *   --min-kill-after-ms/--max-kill-after-ms N   kill this long after each (re)start (500..12000)
 *   --quiet-ms N        after the last restart, no requests for this long: only alarms can resume runs (15000)
 *   --final-wait-ms N   then how long to wait for every run to finish (180000)
 *   --mode bundle|source   serve a bundle built once (default) or plain `wrangler dev` on the checkout
 *   --source-dir DIR    build and serve another checkout of edgestep (default: this one)
 *   --keep              keep the temporary state folder and wrangler logs
 *   --drop-alarms       negative control: while the server is down after each kill, delete workerd's
 *                       scheduled alarms (`_cf_ALARM` in the persisted metadata.sqlite), as if alarms
 *                       were not restored; the interrupted runs must then be reported lost (exit 1)
 *   --json FILE         also write the full report as JSON
 * Exits 1 on any lost run, wrong data, unexplained duplicate execution or run missing from the listing.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULTS, type ChaosOptions } from "./chaos/options.ts";
import { runChaos } from "./chaos/run-chaos.ts";

process.env.WRANGLER_SEND_METRICS = "false";

const numeric = {
  runs: "runs",
  kills: "kills",
  seed: "seed",
  "min-steps": "minSteps",
  "max-steps": "maxSteps",
  "min-call-ms": "minCallMs",
  "max-call-ms": "maxCallMs",
  "min-parallel": "minParallel",
  "max-parallel": "maxParallel",
  "min-kill-after-ms": "minKillAfterMs",
  "max-kill-after-ms": "maxKillAfterMs",
  "quiet-ms": "quietMs",
  "final-wait-ms": "finalWaitMs",
  "grace-ms": "graceMs",
} as const satisfies Record<string, keyof ChaosOptions>;

const { values } = parseArgs({
  options: {
    ...Object.fromEntries(Object.keys(numeric).map((k) => [k, { type: "string" as const }])),
    mode: { type: "string" },
    "source-dir": { type: "string" },
    keep: { type: "boolean" },
    "drop-alarms": { type: "boolean" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  strict: true,
});

if (values.help) {
  console.log(
    "usage: npm run chaos -- [--runs 50] [--kills 5] [--seed N] [--keep] [--json report.json] (see scripts/chaos.ts)",
  );
  process.exit(0);
}

const env = (flag: string) => process.env[`CHAOS_${flag.toUpperCase().replaceAll("-", "_")}`];
const options: Partial<ChaosOptions> = {};
for (const [flag, key] of Object.entries(numeric)) {
  const raw = (values as Record<string, unknown>)[flag] ?? env(flag);
  if (raw === undefined) continue;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${flag} must be a non-negative integer, got "${String(raw)}"`);
    process.exit(2);
  }
  options[key] = n;
}
options.seed ??= Math.floor(Math.random() * 2 ** 31);
const mode = (values.mode as string | undefined) ?? env("mode") ?? DEFAULTS.mode;
if (mode !== "bundle" && mode !== "source") {
  console.error(`--mode must be bundle or source, got "${mode}"`);
  process.exit(2);
}
options.mode = mode;
const sourceDir = (values["source-dir"] as string | undefined) ?? env("source-dir");
if (sourceDir) options.sourceDir = resolve(sourceDir);
options.keep = Boolean(values.keep) || env("keep") === "1";

if (values["drop-alarms"] || env("drop-alarms") === "1") {
  const { DatabaseSync } = await import("node:sqlite");
  options.afterKill = (stateDir) => {
    const file = join(stateDir, "v3/do/edgestep-RunObject/metadata.sqlite");
    if (!existsSync(file)) return;
    const db = new DatabaseSync(file);
    const { changes } = db.prepare("DELETE FROM _cf_ALARM").run();
    db.close();
    console.error(`chaos: --drop-alarms: deleted ${changes} scheduled alarms`);
  };
}

const report = await runChaos(options);
for (const line of report.summary) console.log(line);
const jsonFile = (values.json as string | undefined) ?? env("json");
if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
process.exit(report.ok ? 0 : 1);
