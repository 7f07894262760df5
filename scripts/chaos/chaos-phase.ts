/**
 * The chaos itself: submit the runs in batches while killing `wrangler dev` at random moments and
 * restarting it on the same persisted state.
 */
import type { Upstream } from "../../test/upstream/server.ts";
import type { Api } from "./api.ts";
import type { DevServer } from "./dev-server.ts";
import type { ChaosOptions } from "./options.ts";
import type { ChaosPlan } from "./plans.ts";
import type { KillRecord } from "./report.ts";
import { splitIntoBatches, Submissions, type Submitted } from "./submissions.ts";
import { between, secs, sleep } from "./util.ts";

export interface ChaosPhaseInput {
  server: DevServer;
  api: Api;
  upstream: Upstream;
  plans: ChaosPlan[];
  /** The persist folder, for options.afterKill. */
  stateDir: string;
  /** Makes the Idempotency-Keys unique to this chaos run. */
  keyPrefix: string;
}

export interface ChaosPhaseResult {
  /** Every run, in plan order. */
  submitted: Submitted[];
  kills: KillRecord[];
  /** How long each restart took until /healthz answered. */
  restartMs: number[];
  /** When the phase began, and when the server last became ready (the quiet period counts from it). */
  startedAt: number;
  readyAt: number;
  durationMs: number;
}

export async function runChaosPhase(
  o: ChaosOptions,
  rand: () => number,
  { server, api, upstream, plans, stateDir, keyPrefix }: ChaosPhaseInput,
): Promise<ChaosPhaseResult> {
  const { log } = o;
  const kills: KillRecord[] = [];
  const restartMs: number[] = [];
  const startedAt = Date.now();
  // The runs come in one batch per interval between (re)start and kill, spread over the seconds
  // before the kill, so every kill finds runs in full swing; a later kill may also catch runs
  // recovering from the previous one, and a submission cut off by a kill is repeated after the
  // restart under the same Idempotency-Key.
  const batches = splitIntoBatches(plans, o.kills + 1);
  const submissions = new Submissions(api, keyPrefix);
  let readyAt = Date.now();
  let firstIndex = 0;
  const inFlightCalls = () =>
    upstream.calls.filter((c) => c.path === "/work" && c.endedAt === undefined).length;
  for (let k = 0; k <= o.kills && !submissions.failed; k++) {
    const batch = batches[k]!;
    const delay = k < o.kills ? between(rand, o.minKillAfterMs, o.maxKillAfterMs) : 1_000;
    // Spread over the last 4 s before the kill (runs take 1-10 s), so it finds them at all stages.
    const window = Math.min(4_000, delay * 0.9);
    submissions.spread(batch, firstIndex, delay * 0.95 - window, window);
    firstIndex += batch.length;
    if (k === o.kills) break;
    await sleep(delay);
    // A kill with nothing in flight tests little: give work up to 3 s to show up.
    for (const until = Date.now() + 3_000; inFlightCalls() === 0 && Date.now() < until;)
      await sleep(10);
    const calls = inFlightCalls();
    const killed = await server.kill();
    const afterReadyMs = killed.at - readyAt;
    await o.afterKill?.(stateDir, k + 1);
    const backMs = await server.start();
    readyAt = Date.now();
    restartMs.push(backMs);
    kills.push({
      n: k + 1,
      at: killed.at,
      goneAt: killed.goneAt,
      afterReadyMs,
      inFlightCalls: calls,
      processes: killed.processes,
      downMs: killed.downMs,
      restartMs: backMs,
    });
    log(
      `chaos: kill #${k + 1} at +${secs(killed.at - startedAt)} (${secs(afterReadyMs)} after start, ${calls} upstream calls in flight, ` +
        `${submissions.count}/${o.runs} runs submitted; ${killed.processes.length} processes: ${killed.processes.map((p) => p.split(" ")[1]).join(", ")}; ` +
        `down after ${killed.downMs} ms); back in ${secs(backMs)}`,
    );
  }
  const submitted = await submissions.settle();
  return { submitted, kills, restartMs, startedAt, readyAt, durationMs: Date.now() - startedAt };
}
