/**
 * The workers tests' helpers, in one module: call the Worker, start runs, read them through
 * the public API, drive their alarms and clock through TestRunObject's seams
 * (test/support/test-run-object.ts), and read the loopback upstream's call log.
 *
 * Nothing here races workerd: the test Worker's RunObject has a virtual alarm that only these
 * helpers fire, so a run moves only when a test moves it.
 */
import { env, exports } from "cloudflare:workers";
import { expect, inject } from "vitest";
import type { TestDestinationObject } from "./support/test-destination-object";
import type { TestRunObject } from "./support/test-run-object";
import { TEST_HOST_SUFFIX } from "./support/loopback-hosts";

export { maxInFlight } from "./upstream/log";

export const upstreamUrl = inject("upstreamUrl");

/**
 * The loopback upstream under a host of its own, `<label>.upstream.test` (test/support/
 * loopback-hosts.ts): flow control keys destinations by host, so a 429 the test provokes there
 * pauses only its own host (SPEC 10).
 */
export const hostUrl = (label: string, path = "/") =>
  `http://${label.toLowerCase()}${TEST_HOST_SUFFIX}${path}`;

/**
 * The upstream's programmable endpoint: `/script/<key>` answers as `?plan=` says (test/upstream),
 * under the key's own host (see `hostUrl`).
 */
export const script = (key: string, extra = "") => hostUrl(key, `/script/${key}${extra}`);

// ---- the API ----

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

/** Submits a plan that must be accepted (202); its answer `{ runId, status }`. */
export async function start(plan: unknown): Promise<{ runId: string; status: string }> {
  const { res, body } = await submit(plan);
  expect(res.status, JSON.stringify(body)).toBe(202);
  return body;
}

/** Submits a plan that must be accepted (202); its run id. */
export async function started(plan: unknown): Promise<string> {
  return (await start(plan)).runId;
}

/** POSTs a JSON body (or none) to `path`. */
export async function post(path: string, body?: unknown): Promise<{ res: Response; body: any }> {
  const res = await api(path, {
    method: "POST",
    ...(body !== undefined && {
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  });
  return { res, body: await res.json() };
}

export async function status(runId: string): Promise<any> {
  return (await api(`/v1/runs/${runId}`)).json();
}

export async function stepDetail(runId: string, stepId: string): Promise<any> {
  const res = await api(`/v1/runs/${runId}/steps/${stepId}`);
  expect(res.status).toBe(200);
  return res.json();
}

export async function results(runId: string): Promise<any[]> {
  return (await api(`/v1/runs/${runId}/results`)).json();
}

/** The run's whole event log (one page of up to 1,000). */
export async function events(runId: string): Promise<any[]> {
  return ((await (await api(`/v1/runs/${runId}/events?limit=1000`)).json()) as any).events;
}

export async function eventTypes(runId: string): Promise<string[]> {
  return (await events(runId)).map((e) => e.type);
}

/** A status's steps by id. */
export function byId(s: any): Record<string, any> {
  return Object.fromEntries(s.steps.map((st: any) => [st.id, st]));
}

// ---- the run's Durable Object: alarm, clock, restarts ----

/** The test Worker's run objects are TestRunObjects (test/support/worker.ts, vitest.config.ts). */
const runs = env.RUNS as unknown as DurableObjectNamespace<TestRunObject>;

export function runStub(runId: string) {
  return runs.get(runs.idFromName(runId));
}

/**
 * Fires the run's alarm now, whatever its time, and waits for the webhook deliveries it
 * started beside the run; false (nothing ran) when none is set.
 */
export async function fireAlarm(runId: string): Promise<boolean> {
  return runStub(runId).fireAlarm();
}

/** Fires the run's alarm without waiting for the webhook deliveries it started beside the run. */
export async function fireAlarmOnly(runId: string): Promise<boolean> {
  return runStub(runId).fireAlarm({ deliveries: false });
}

/** Runs the run's `alarm()` whether or not an alarm is set (a duplicate or stale delivery). */
export async function runAlarm(runId: string): Promise<void> {
  await runStub(runId).runAlarm();
}

/** When the run's alarm is set for; null when none is. */
export async function alarmAt(runId: string): Promise<number | null> {
  return runStub(runId).alarmAt();
}

/** Moves the run's clock `ms` forward (timers, retries and deliveries due by then become due). */
export async function advanceClock(runId: string, ms: number): Promise<number> {
  return runStub(runId).advanceClock(ms);
}

/** Moves the run's clock to its alarm's time, so what the alarm points at is due. */
export async function advanceToAlarm(runId: string): Promise<number | null> {
  return runStub(runId).advanceToAlarm();
}

const FINAL = new Set(["completed", "partial", "failed", "cancelled", "paused"]);

/**
 * Fires the run's alarm (early: the clock does not move) until the run is final or paused,
 * no alarm is set, or `max` alarms ran; the run's status then.
 */
export async function drive(runId: string, max = 50): Promise<any> {
  for (let i = 0; i < max; i++) {
    const fired = await fireAlarm(runId);
    const s = await status(runId);
    if (FINAL.has(s.status) || !fired) return s;
  }
  return status(runId);
}

/** Fires the run's alarm until none is set (webhook deliveries and compensations outlive the run), at most `max` times. */
export async function settle(runId: string, max = 20): Promise<void> {
  for (let i = 0; i < max && (await fireAlarm(runId)); i++);
}

/** Submits a plan and drives it to the end. */
export async function execute(plan: unknown, max?: number): Promise<any> {
  const { res, body } = await submit(plan);
  if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(body)}`);
  return drive(body.runId, max);
}

/**
 * Fires the alarms of `runIds` together (their iterations live at once, as in production) until
 * every run is final or paused, waiting 5 ms between rounds for the grants their destinations
 * send them (SPEC 10); their statuses then.
 */
export async function driveAll(runIds: string[], rounds = 400): Promise<any[]> {
  for (let r = 0; r < rounds; r++) {
    await Promise.all(runIds.map((id) => fireAlarm(id)));
    const all = await Promise.all(runIds.map(status));
    if (all.every((s) => FINAL.has(s.status))) return all;
    await scheduler.wait(5);
  }
  throw new Error(`runs not final after ${rounds} rounds of alarms`);
}

/** Fires the alarm once in the background (the caller inspects the run while it is in flight). */
export function alarmInBackground(runId: string): Promise<"settled" | "rejected"> {
  return fireAlarm(runId).then(
    () => "settled" as const,
    () => "rejected" as const,
  );
}

/** Aborts the run's Durable Object instance: in-memory state is lost, storage (and the alarm) stay. */
export async function abortObject(runId: string): Promise<void> {
  const aborted = await runStub(runId)
    .crash()
    .then(
      () => false,
      () => true,
    );
  expect(aborted).toBe(true);
}

// ---- destinations (SPEC 10): their objects' alarm and clock ----

/** The test Worker's destination objects are TestDestinationObjects (test/support/worker.ts). */
const slots = env.DESTINATION_SLOTS as unknown as DurableObjectNamespace<TestDestinationObject>;

export function destinationStub(destination: string) {
  return slots.get(slots.idFromName(destination));
}

/** In flight, waiting, and the pause of a destination, as GET /v1/destinations shows them. */
export async function destinationState(destination: string) {
  return destinationStub(destination).describe(destination);
}

/** Fires the destination object's alarm (expires leases, wakes its queue); false when none is set. */
export async function fireDestinationAlarm(destination: string): Promise<boolean> {
  return destinationStub(destination).fireAlarm();
}

/** Moves the destination object's clock `ms` forward. */
export async function advanceDestinationClock(destination: string, ms: number): Promise<number> {
  return destinationStub(destination).advanceClock(ms);
}

/** Polls (bounded, 10 ms apart) until `check` holds; `what` names the awaited state in the error. */
export async function until(
  check: () => Promise<boolean>,
  what: string,
  tries = 300,
): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await scheduler.wait(10);
  }
  throw new Error(`timed out waiting until ${what}`);
}

// ---- the loopback upstream ----

/** Calls the upstream received on paths starting with `prefix`. */
export async function upstreamCalls(prefix: string): Promise<any[]> {
  return (await fetch(`${upstreamUrl}/_log?prefix=${encodeURIComponent(prefix)}`)).json();
}

/** Calls the upstream received from one run (by its `Idempotency-Key`) on paths starting with `prefix`. */
export async function runCalls(runId: string, prefix = "/"): Promise<any[]> {
  return (await upstreamCalls(prefix)).filter(
    (c) => typeof c.idempotencyKey === "string" && c.idempotencyKey.startsWith(`${runId}:`),
  );
}

/**
 * An upstream URL whose calls answer only once `open()` was called (at once after): the test,
 * not the machine's speed, decides when they complete.
 */
export function gate(name: string) {
  const key = unique(name);
  const path = `/gate/${key}`;
  const url = `${upstreamUrl}${path}`;
  const open = async () => void (await fetch(`${url}/open`, { method: "POST" })).body?.cancel();
  return { key, path, url, open };
}

/** Upstream calls on `prefix` whose JSON body names `runId` (the callback tool's POSTs). */
export async function callsWithRun(prefix: string, runId: string): Promise<any[]> {
  return (await upstreamCalls(prefix)).filter(
    (c) => typeof c.body === "string" && c.body.includes(runId),
  );
}

let counter = 0;
/** A key unique to this test run, for upstream scripts and Durable Object names. */
export function unique(label = "k"): string {
  return `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Every read of a run answers 200 with JSON: its status, results, events and the steps `stepIds`. */
export async function expectReadable(runId: string, stepIds: string[]): Promise<void> {
  const paths = [
    "",
    "/results",
    "/events?limit=1000",
    ...stepIds.map((id) => `/steps/${encodeURIComponent(id)}`),
  ];
  for (const path of paths) {
    const res = await api(`/v1/runs/${runId}${path}`);
    const text = await res.text();
    expect(res.status, `GET /v1/runs/${runId}${path}: ${text.slice(0, 300)}`).toBe(200);
    expect(() => JSON.parse(text)).not.toThrow();
  }
}
