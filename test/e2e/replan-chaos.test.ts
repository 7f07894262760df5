/**
 * Chaos for replanning (SPEC 9.2): `wrangler dev` (scripts/chaos's DevServer: its own process
 * group, persisted state) is SIGKILLed while every run's planner call is in flight, restarted,
 * then SIGKILLed again while the repaired steps run. Every run must still complete with the
 * repair applied exactly once: one `replan_applied`, plan revision 1, the planner asked again only
 * with the same Idempotency-Key, and the repaired definition run to success once. The runs are
 * resumed by their restored alarms (nothing but status reads reaches them).
 *
 * Ports: wrangler dev, its inspector and the upstream listen on free ports, or, with
 * EDGESTEP_E2E_PORTS=<first>-<last>, on the first three of that range.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DevServer } from "../../scripts/chaos/dev-server.ts";
import { DEFAULTS } from "../../scripts/chaos/options.ts";
import { freePort, sleep } from "../../scripts/chaos/util.ts";
import { devServerArgs } from "../../scripts/chaos/wrangler.ts";
import { startUpstream, type Upstream } from "../upstream/server.ts";

const RUNS = 3;
/**
 * The planner and the repaired step each take this long: the kill comes as soon as every run's
 * call arrived, well inside this, even on a loaded machine.
 */
const CALL_MS = 4_000;

async function ports(): Promise<[number, number, number]> {
  const range = /^(\d+)-(\d+)$/.exec(process.env.EDGESTEP_E2E_PORTS ?? "");
  if (range) {
    const first = Number(range[1]);
    return [first, first + 1, first + 2];
  }
  return [await freePort(), await freePort(), await freePort()];
}

let server: DevServer | undefined;
let upstream: Upstream | undefined;
let dir: string | undefined;
afterAll(async () => {
  await server?.stop();
  await upstream?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function json(url: string, init?: RequestInit): Promise<any> {
  for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
      return await res.json();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/** Waits (bounded) until the upstream has received `n` calls on paths starting with `prefix`. */
async function untilCalls(prefix: string, n: number, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
    if (upstream!.calls.filter((c) => c.path.startsWith(prefix)).length >= n) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe("chaos: kill -9 of wrangler dev around a repair (SPEC 9.2)", () => {
  it(
    "applies each run's repair exactly once, whatever the kills cut off",
    { timeout: 180_000 },
    async () => {
      const [devPort, inspectorPort, upstreamPort] = await ports();
      upstream = await startUpstream(upstreamPort);
      dir = await mkdtemp(join(tmpdir(), "edgestep-replan-chaos-"));
      const args = await devServerArgs({ ...DEFAULTS, mode: "bundle" }, dir);
      server = new DevServer(dir, devPort, args, inspectorPort);
      await server.start();

      const repaired = {
        id: "find",
        tool: "http",
        params: { url: `${upstream.url}/work?ms=${CALL_MS}&city=Berlin` },
        verify: "${output.value}",
      };
      const planner = `${upstream.url}/planner/answer/chaos?${new URLSearchParams({
        body: JSON.stringify({ steps: [repaired] }),
        delay: String(CALL_MS),
      })}`;
      const plan = {
        config: { retry: { baseDelayMs: 200, maxDelayMs: 1_000 } },
        replan: { url: planner, cooldownMs: 0 },
        steps: [
          {
            id: "find",
            tool: "http",
            params: { url: `${upstream.url}/facilities`, query: { location: "Berln" } },
            verify: "${output.length}",
          },
          { id: "after", tool: "pass", params: { value: "${steps.find.data.value}" } },
        ],
      };
      const runIds: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const created = await json(`${server.url}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(plan),
        });
        runIds.push(created.runId);
      }

      // Kill 1: every run's planner call is in flight.
      await untilCalls("/planner/answer/chaos", RUNS, "every run's planner call");
      await server.kill();
      await server.start();
      // Kill 2: every run's repaired step is in flight (its repair was applied before).
      await untilCalls("/work", RUNS, "every repaired step's call");
      await server.kill();
      await server.start();

      const finals: any[] = [];
      for (const runId of runIds) {
        for (const deadline = Date.now() + 60_000; ; await sleep(250)) {
          const s = await json(`${server.url}/v1/runs/${runId}`);
          if (["completed", "partial", "failed", "cancelled"].includes(s.status)) {
            finals.push(s);
            break;
          }
          if (Date.now() > deadline) throw new Error(`run ${runId} did not finish: ${s.status}`);
        }
      }
      for (const [k, runId] of runIds.entries()) {
        const s = finals[k];
        const story = JSON.stringify(s);
        expect(s.status, story).toBe("completed");
        expect(s.replans, story).toEqual([
          expect.objectContaining({ n: 1, stepId: "find", answer: "repaired" }),
        ]);
        const plan = await json(`${server.url}/v1/runs/${runId}/plan`);
        expect(plan.revision).toBe(1);
        const log = await json(`${server.url}/v1/runs/${runId}/events?limit=1000`);
        const applied = log.events.filter((e: any) => e.type === "replan_applied");
        expect(applied, story).toHaveLength(1);

        const mine = (prefix: string) =>
          upstream!.calls.filter(
            (c) => c.path.startsWith(prefix) && c.idempotencyKey?.startsWith(`${runId}:`),
          );
        // The cut-off planner call was made again, with the same key; nothing asked twice after.
        const asked = mine("/planner/answer/chaos");
        expect(asked.length).toBeGreaterThanOrEqual(2);
        expect(new Set(asked.map((c) => c.idempotencyKey))).toEqual(
          new Set([`${runId}:find:replan:1`]),
        );
        // The repaired step: its cut-off call again, then success once; the old definition ran once.
        const work = mine("/work");
        expect(work.length).toBeGreaterThanOrEqual(2);
        expect(
          work.filter((c) => c.endedAt !== undefined && !c.aborted).length,
        ).toBeGreaterThanOrEqual(1);
        expect(mine("/facilities")).toHaveLength(1);
        const detail = await json(`${server.url}/v1/runs/${runId}/steps/find`);
        expect(detail.attemptLog[0]).toMatchObject({ attempt: 1, category: "verification_failed" });
        expect(detail.attemptLog.at(-1).category, JSON.stringify(detail)).toBeUndefined();
      }
    },
  );
});
