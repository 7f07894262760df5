/**
 * QuotaGate on its own, with a destination object that records what it is asked: the hot path
 * (a call to a destination neither limited nor paused) answers at once, without a Promise and
 * without asking anyone; other calls ask their destination, use grants they were told of, and
 * keep, renew and give back their leases.
 */
import { describe, expect, it, vi } from "vitest";
import { parseDestinations } from "../../src/engine/destinations";
import { LEASE_RENEW_MS } from "../../src/engine/flow-control";
import { ToolSet } from "../../src/tools";
import { parseRegistry } from "../../src/tools/registry";
import type { AcquireOutcome, DestinationObject } from "../destinations/destination-object";
import { PauseCache } from "../destinations/pause-cache";
import { QuotaGate, RECHECK_MS } from "./quota-gate";
import { stepTicket } from "./tickets";

function setup(answer: AcquireOutcome = { granted: true }, releaseGrants: string[] = []) {
  const told: string[] = [];
  let now = 1_000;
  const record =
    (what: string, result: unknown = undefined) =>
    async (destination: string, ...rest: unknown[]) => {
      told.push(`${what} ${destination} ${JSON.stringify(rest)}`);
      return result;
    };
  const slots = {
    acquire: record("acquire", answer),
    release: record("release", releaseGrants),
    renew: record("renew", 1),
    cancelRun: record("cancelRun"),
    pause: record("pause", 0),
  } as unknown as DurableObjectStub<DestinationObject>;
  const registry = parseRegistry({ crm: { url: "https://crm.test/v1" } });
  const tools = new ToolSet({
    registry,
    allowedHosts: null,
    fetcher: async () => new Response(),
    service: () => undefined,
    secret: () => undefined,
  });
  const work: Promise<unknown>[] = [];
  const gate = new QuotaGate({
    table: parseDestinations(
      { "limited.test": { concurrency: 1 }, crm: {}, "crm.test": { concurrency: 5 } },
      tools.registryNames,
    ),
    tools,
    pauses: new PauseCache(),
    slots: () => slots,
    readBoard: null,
    onGrant: (destination, ticket) => void told.push(`granted ${destination} ${ticket}`),
    beside: (p) => void work.push(p),
    runId: () => "run_1",
    now: () => now,
  });
  return {
    gate,
    told,
    settled: () => Promise.all(work),
    advance: (ms: number) => (now += ms),
    now: () => now,
  };
}

const http = (url: string) => ({ url });

describe("QuotaGate", () => {
  it("a call to a destination neither limited nor paused goes at once, asking no one", async () => {
    const { gate, told, settled } = setup();
    for (const [tool, params] of [
      ["pass", { value: 1 }],
      ["http", http("https://free.test/x")],
      ["http", http("not a url")],
      ["crm", {}],
    ] as const) {
      const admission = gate.admit(tool, params, stepTicket(0, 1), 1_000);
      expect(admission).toEqual({ type: "go", lease: null }); // not a Promise
    }
    await settled();
    expect(told).toEqual([]);
  });

  it("a call to a limited destination asks it, and holds the lease it gets until it ends", async () => {
    const { gate, told, settled } = setup({ granted: true });
    const admission = gate.admit("http", http("https://limited.test/x"), stepTicket(2, 1), 1_000);
    expect(admission).toBeInstanceOf(Promise);
    const lease = { destination: "limited.test", ticket: "s.2.1" };
    expect(await admission).toEqual({ type: "go", lease });
    gate.ended("http", http("https://limited.test/x"), lease, { ok: true, data: 1 }, 2_000);
    await settled();
    expect(told).toEqual([
      'acquire limited.test ["run_1","s.2.1"]',
      'release limited.test ["run_1",["s.2.1"]]',
    ]);
  });

  it("a queued call waits, to ask again after RECHECK_MS unless a grant wakes it first", async () => {
    const { gate, told } = setup({ granted: false, position: 2, pausedForMs: null });
    const ticket = stepTicket(0, 1);
    expect(await gate.admit("http", http("https://limited.test/x"), ticket, 1_000)).toEqual({
      type: "wait",
      wait: {
        destination: "limited.test",
        reason: "queued",
        until: 1_000 + RECHECK_MS,
        position: 2,
        pausedUntil: null,
      },
    });
    // The grant came: the call goes without asking again.
    expect(gate.granted("limited.test", ticket)).toBe(false); // no call waits in memory for it
    expect(await gate.admit("http", http("https://limited.test/x"), ticket, 1_100)).toEqual({
      type: "go",
      lease: { destination: "limited.test", ticket },
    });
    expect(told).toHaveLength(1);
  });

  it("a 429 pauses its destination here at once: the next call to it asks the destination", async () => {
    const { gate, told, settled, now } = setup({ granted: false, position: 1, pausedForMs: 1_500 });
    const url = http("https://free.test/x");
    const answer = {
      ok: false as const,
      category: "rate_limited" as const,
      message: "429",
      status: 429,
      retryAfterMs: 2_000,
    };
    gate.ended("http", url, null, answer, now());
    const admission = await gate.admit("http", url, stepTicket(1, 1), now());
    expect(admission).toMatchObject({
      type: "wait",
      wait: { destination: "free.test", reason: "paused", pausedUntil: now() + 1_500 },
    });
    await settled();
    expect(told).toEqual(["pause free.test [2000]", 'acquire free.test ["run_1","s.1.1"]']);
  });

  it("a release's answer grants the same run's queued calls at once", async () => {
    const { gate, told, settled } = setup({ granted: true }, ["s.1.1"]);
    await gate.admit("http", http("https://limited.test/x"), stepTicket(0, 1), 0);
    told.length = 0;
    expect(gate.releasing).toBe(false);
    gate.release({ destination: "limited.test", ticket: stepTicket(0, 1) });
    expect(gate.releasing).toBe(true);
    await gate.released();
    expect(gate.releasing).toBe(false);
    await settled();
    expect(told).toEqual([
      'release limited.test ["run_1",["s.0.1"]]',
      "granted limited.test s.1.1",
    ]);
  });

  it("renews the leases of calls in flight every LEASE_RENEW_MS, by destination, until they end", async () => {
    vi.useFakeTimers();
    try {
      const { gate, told, settled, now } = setup({ granted: true });
      const leases = [];
      for (const n of [1, 2]) {
        const url = http("https://limited.test/x");
        const admission = await gate.admit("http", url, stepTicket(n, 1), now());
        if (admission.type === "go") leases.push(admission.lease);
      }
      vi.advanceTimersByTime(LEASE_RENEW_MS - 1);
      expect(told.filter((t) => t.startsWith("renew"))).toEqual([]);
      vi.advanceTimersByTime(1);
      vi.advanceTimersByTime(LEASE_RENEW_MS);
      for (const lease of leases) gate.release(lease);
      vi.advanceTimersByTime(3 * LEASE_RENEW_MS); // nothing held: no more renewals
      await settled();
      expect(told.filter((t) => t.startsWith("renew"))).toEqual([
        'renew limited.test ["run_1",["s.1.1","s.2.1"]]',
        'renew limited.test ["run_1",["s.1.1","s.2.1"]]',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a redirect within where the call started is followed; one into another limited destination is not", () => {
    const { gate } = setup();
    // crm is listed by name; its host has limits of its own: `/v1` → `/v1/` stays where it started.
    expect(gate.redirectRefusal("crm", {}, "https://crm.test/v1/", 1_000)).toBeNull();
    expect(
      gate.redirectRefusal("http", http("http://free.test/a"), "https://free.test/a", 1_000),
    ).toBeNull();
    expect(gate.redirectRefusal("crm", {}, "https://limited.test/x", 1_000)).toMatchObject({
      category: "egress_denied",
    });
    expect(
      gate.redirectRefusal("http", http("https://free.test/a"), "https://limited.test/x", 1_000),
    ).toMatchObject({
      category: "egress_denied",
    });
  });

  it("a 429 behind a redirect pauses the destination that answered, unless it is where the call started", async () => {
    const { gate, told, settled } = setup();
    const tooMany = (answeredBy: string) => ({
      ok: false as const,
      category: "rate_limited" as const,
      message: "HTTP 429",
      status: 429,
      retryAfterMs: 5_000,
      answeredBy,
    });
    gate.ended("crm", {}, null, tooMany("https://crm.test"), 1_000);
    gate.ended("http", http("https://free.test/a"), null, tooMany("https://other.test"), 1_000);
    await settled();
    expect(told).toEqual(["pause crm [5000]", "pause other.test [5000]"]);
  });
});
