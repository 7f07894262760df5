/**
 * Helpers shared by the control-flow tests (conditions, forEach, approvals, callbacks,
 * rollback): start a run, POST a control body, read a step, its events, stored rows.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { api, runStub, upstreamCalls } from "./helpers";

export async function start(plan: unknown): Promise<{ runId: string; status: string }> {
  const res = await api("/v1/runs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(plan),
  });
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(202);
  return body;
}

export async function started(plan: unknown): Promise<string> {
  return (await start(plan)).runId;
}

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

export async function stepDetail(runId: string, stepId: string): Promise<any> {
  const res = await api(`/v1/runs/${runId}/steps/${stepId}`);
  expect(res.status).toBe(200);
  return res.json();
}

export async function events(runId: string): Promise<any[]> {
  return ((await (await api(`/v1/runs/${runId}/events?limit=1000`)).json()) as any).events;
}

export function byId(s: any): Record<string, any> {
  return Object.fromEntries(s.steps.map((st: any) => [st.id, st]));
}

export async function sql(runId: string, query: string): Promise<void> {
  await runInDurableObject(runStub(runId), (_, state) => {
    state.storage.sql.exec(query);
  });
}

export async function rows<T = any>(runId: string, query: string): Promise<T[]> {
  return runInDurableObject(
    runStub(runId),
    (_, state) => state.storage.sql.exec(query).toArray() as T[],
  );
}

export async function storedAlarm(runId: string): Promise<number | null> {
  return runInDurableObject(runStub(runId), (_, state) => state.storage.getAlarm());
}

/** Fires the alarm once in the background (the caller inspects the run while it is in flight). */
export function alarmInBackground(runId: string): Promise<"settled" | "rejected"> {
  return runDurableObjectAlarm(runStub(runId)).then(
    () => "settled" as const,
    () => "rejected" as const,
  );
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

/** Aborts the run's Durable Object instance: in-memory state is lost, storage stays. */
export async function abortObject(runId: string): Promise<void> {
  const aborted = await runInDurableObject(runStub(runId), (_, state) => {
    state.abort("test: simulated restart");
  }).then(
    () => false,
    () => true,
  );
  expect(aborted).toBe(true);
}

/** Upstream calls on `prefix` whose JSON body names `runId` (the callback tool's POSTs). */
export async function callsWithRun(prefix: string, runId: string): Promise<any[]> {
  return (await upstreamCalls(prefix)).filter(
    (c) => typeof c.body === "string" && c.body.includes(runId),
  );
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
