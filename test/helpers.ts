/** Shared test helpers: call the Worker, drive a run's alarms, read the upstream's call log. */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { inject } from "vitest";

export const upstreamUrl = inject("upstreamUrl");

export async function api(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(`http://edgestep.test${path}`, init));
}

export async function submit(plan: unknown, headers: Record<string, string> = {}) {
  const res = await api("/v1/runs", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof plan === "string" ? plan : JSON.stringify(plan),
  });
  return { res, body: (await res.json()) as any };
}

export function runStub(runId: string) {
  return env.RUNS.get(env.RUNS.idFromName(runId));
}

export async function status(runId: string): Promise<any> {
  return (await api(`/v1/runs/${runId}`)).json();
}

const FINAL = new Set(["completed", "partial", "failed", "cancelled", "paused"]);

/**
 * Fires the run's alarms (without waiting for their time) until it ends or `max` alarms ran.
 * workerd also fires due alarms by itself: when one of those is running an iteration, wait
 * for it instead of mistaking "no alarm left to fire" for "the run is idle".
 */
export async function drive(runId: string, max = 50): Promise<any> {
  const stub = runStub(runId);
  for (let i = 0; i < max; i++) {
    const ran = await fireAlarm(stub);
    const wasLive = await awaitLiveIteration(stub);
    const s = await status(runId);
    if (FINAL.has(s.status)) return s;
    if (!ran && !wasLive && !(await alarmInTransit(stub, s.status))) return status(runId);
  }
  return status(runId);
}

/**
 * A running (or pending) run always has an alarm set or an iteration live. When it seems to
 * have neither, workerd has taken its alarm and is about to call alarm(): wait (bounded)
 * until that shows. True when it did.
 */
async function alarmInTransit(
  stub: ReturnType<typeof runStub>,
  runStatus: string,
): Promise<boolean> {
  if (runStatus !== "running" && runStatus !== "pending") return false;
  // Up to 5 s: on a loaded machine (CI, parallel test files) the delivery can lag.
  for (let k = 0; k < 500; k++) {
    await scheduler.wait(10);
    const busy = await runInDurableObject(stub, async (instance, state) => {
      const live =
        (instance as unknown as { iterationDone?: Promise<unknown> }).iterationDone !== undefined;
      return live || (await state.storage.getAlarm()) !== null;
    });
    if (busy) return true;
  }
  return false;
}

/** Waits for an iteration that a real (workerd-fired) alarm is running; true if there was one. */
async function awaitLiveIteration(stub: ReturnType<typeof runStub>): Promise<boolean> {
  const live = await runInDurableObject(stub, (instance) => {
    const done = (instance as unknown as { iterationDone?: Promise<unknown> }).iterationDone;
    return done
      ? done.then(
          () => true,
          () => true,
        )
      : false;
  });
  if (live) await scheduler.wait(10); // let that alarm re-arm after its iteration
  return live;
}

/** Fires the run's alarm (whatever its time) and waits for the deliveries it started beside the run. */
export async function fireAlarm(stub: ReturnType<typeof runStub>): Promise<boolean> {
  const ran = await runDurableObjectAlarm(stub);
  await stub.drained();
  return ran;
}

/** Submits a plan and drives it to the end. */
export async function execute(plan: unknown, max?: number): Promise<any> {
  const { res, body } = await submit(plan);
  if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(body)}`);
  return drive(body.runId, max);
}

export async function results(runId: string): Promise<any[]> {
  return (await api(`/v1/runs/${runId}/results`)).json();
}

/** Calls the upstream received on paths starting with `prefix`. */
export async function upstreamCalls(prefix: string): Promise<any[]> {
  return (await fetch(`${upstreamUrl}/_log?prefix=${encodeURIComponent(prefix)}`)).json();
}

let counter = 0;
/** A key unique to this test run, for upstream scripts and Durable Object names. */
export function unique(label = "k"): string {
  return `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Calls the upstream received from one run (by its `Idempotency-Key`) on paths starting with `prefix`. */
export async function runCalls(runId: string, prefix = "/"): Promise<any[]> {
  return (await upstreamCalls(prefix)).filter(
    (c) => typeof c.idempotencyKey === "string" && c.idempotencyKey.startsWith(`${runId}:`),
  );
}
