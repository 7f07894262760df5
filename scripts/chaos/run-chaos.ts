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
 *     see wrangler.ts and dev-server.ts;
 *  3. submits the runs (random DAGs and chains of `http` steps, seeded: plans.ts) in batches spread
 *     over the seconds before each kill, under an Idempotency-Key so a submission cut off by a kill
 *     is repeated safely; at random moments it SIGKILLs the whole process group (wrangler and its
 *     workerd children), checks the processes are gone and the port refuses connections, and
 *     restarts `wrangler dev` on the same persist folder (chaos-phase.ts);
 *  4. after the last restart, sends no request for `quietMs` (lease + retry cap + margin), so only
 *     alarms restored from storage can resume the interrupted runs; a run that moves again only
 *     once polled counts as stuck;
 *  5. waits (bounded) for every run to finish (drain.ts) and checks (verify.ts, verify-step.ts):
 *     every run `completed`; every step's `data` is the upstream's answer to that step (key, value,
 *     attempt and the templated input); every upstream call was recorded as an attempt first; a key
 *     was called more than once only for an attempt the run recorded as failed (`interrupted` ones
 *     must have been in flight at a kill), and never after its success was recorded; runs still
 *     unfinished at the deadline are lost (stuck: no alarm brought them back), with their alarm
 *     state read from the persisted SQLite (stuck-alarms.ts);
 *  6. pages through `GET /v1/runs` and checks that every run is listed exactly once, with the
 *     status its own GET shows (verify-listing.ts): the listing lost nothing either.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32 } from "../../bench/plans.ts";
import { startUpstream, type Upstream } from "../../test/upstream/server.ts";
import { Api } from "./api.ts";
import { runChaosPhase } from "./chaos-phase.ts";
import { DevServer } from "./dev-server.ts";
import { drain } from "./drain.ts";
import { withDefaults, type ChaosOptions } from "./options.ts";
import { makePlan } from "./plans.ts";
import { summarize, type ChaosReport } from "./report.ts";
import { describeStuck } from "./stuck-alarms.ts";
import { freePort, secs, sleep } from "./util.ts";
import { verify } from "./verify.ts";
import { verifyListing } from "./verify-listing.ts";
import { devServerArgs } from "./wrangler.ts";

export async function runChaos(partial: Partial<ChaosOptions> = {}): Promise<ChaosReport> {
  const o = withDefaults(partial);
  const { log } = o;
  const t0 = Date.now();
  const rand = mulberry32(o.seed);
  const dir = await mkdtemp(join(tmpdir(), "edgestep-chaos-"));
  const stateDir = join(dir, "state");
  let upstream: Upstream | undefined;
  let server: DevServer | undefined;
  let ok = false;
  // Ctrl-C must not leave wrangler and workerd running in their own process group.
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

    const tb = Date.now();
    const args = await devServerArgs(o, dir);
    const buildMs = Date.now() - tb;

    server = new DevServer(dir, await freePort(), args);
    const api = new Api(server.url);
    const startMs = [await server.start()];
    log(
      `chaos: wrangler dev ready on ${server.url} in ${secs(startMs[0]!)} (build ${secs(buildMs)})`,
    );

    const plans = Array.from({ length: o.runs }, (_, i) => makePlan(rand, i, upstream!.url, o));
    const chaos = await runChaosPhase(o, rand, {
      server,
      api,
      upstream,
      plans,
      stateDir,
      keyPrefix: `chaos-${o.seed}-${t0}`,
    });
    const { submitted, kills } = chaos;
    startMs.push(...chaos.restartMs);

    // Quiet: no request reaches any run, so only alarms restored from storage can resume them.
    const quietLeft = chaos.readyAt + o.quietMs - Date.now();
    if (quietLeft > 0) {
      log(
        `chaos: quiet for ${secs(quietLeft)}: no requests, only restored alarms can resume the interrupted runs`,
      );
      await sleep(quietLeft);
    }

    const drainStart = Date.now();
    const drained = await drain(
      api,
      submitted.map((s) => s.runId),
      o.finalWaitMs,
      log,
    );
    const drainMs = Date.now() - drainStart;

    const tv = Date.now();
    const verified = await verify({
      api,
      upstream,
      submitted,
      drained,
      kills,
      graceMs: o.graceMs,
      drainStart,
      lastReadyAt: chaos.readyAt,
    });
    const listing = await verifyListing(api, submitted, drained.views);
    const verifyMs = Date.now() - tv;
    if (verified.lost.length > 0) await describeStuck(stateDir, verified.lost);
    const timing = {
      totalMs: Date.now() - t0,
      buildMs,
      startMs,
      chaosMs: chaos.durationMs,
      quietMs: drainStart - chaos.startedAt - chaos.durationMs,
      drainMs,
      verifyMs,
    };
    ok =
      verified.lost.length === 0 &&
      verified.stuckUntilPolled.length === 0 &&
      verified.notCompleted.length === 0 &&
      verified.wrongData.length === 0 &&
      verified.unexplained.length === 0 &&
      listing.length === 0 &&
      kills.length === o.kills;
    const { log: _, afterKill: __, ...options } = o;
    const report: ChaosReport = {
      ...verified,
      listing,
      ok,
      options,
      kills,
      timing,
      stateDir: ok && !o.keep ? null : dir,
      summary: [],
    };
    report.summary = summarize(report);
    return report;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await server?.stop();
    await upstream?.close();
    // A failed run keeps its state and wrangler logs for inspection.
    if (ok && !o.keep) await rm(dir, { recursive: true, force: true });
  }
}
