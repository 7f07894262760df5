import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { mayGoAhead } from "../src/api/run-quota";
import { unique } from "./helpers";

const app = createApp();
const plan = JSON.stringify({ steps: [{ tool: "pass", params: { value: 1 } }] });

/** POST /v1/runs with one fresh API key limited to `limit` runs a minute. */
function limitedPoster(limit: number) {
  const key = unique("key");
  const limited = { ...env, API_KEYS: key, RUNS_PER_MINUTE: String(limit) };
  return (headers: Record<string, string> = {}) =>
    app.fetch(
      new Request("http://edgestep.test/v1/runs", {
        method: "POST",
        body: plan,
        headers: { authorization: `Bearer ${key}`, ...headers },
      }),
      limited,
    );
}

describe("RUNS_PER_MINUTE", () => {
  it("answers 429 with Retry-After past the limit, per API key", async () => {
    const [a, b] = [unique("key"), unique("key")];
    const limited = { ...env, API_KEYS: `${a},${b}`, RUNS_PER_MINUTE: "2" };
    const post = (key: string) =>
      app.fetch(
        new Request("http://edgestep.test/v1/runs", {
          method: "POST",
          body: plan,
          headers: { authorization: `Bearer ${key}` },
        }),
        limited,
      );
    expect((await post(a)).status).toBe(202);
    expect((await post(a)).status).toBe(202);
    const third = await post(a);
    expect(third.status).toBe(429);
    expect(((await third.json()) as any).error.code).toBe("rate_limited");
    const retryAfter = Number(third.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await post(b)).status).toBe(202);
  });

  it("rejects a bad plan before counting it", async () => {
    const key = unique("key");
    const limited = { ...env, API_KEYS: key, RUNS_PER_MINUTE: "1" };
    const post = (body: string) =>
      app.fetch(
        new Request("http://edgestep.test/v1/runs", {
          method: "POST",
          body,
          headers: { authorization: `Bearer ${key}` },
        }),
        limited,
      );
    expect((await post("{bad")).status).toBe(400);
    expect((await post(plan)).status).toBe(202);
  });

  it("answers an idempotent retry with its run (200), not 429, once the quota is spent", async () => {
    const post = limitedPoster(1);
    const idem = { "idempotency-key": unique("idem") };
    const first = await post(idem);
    expect(first.status).toBe(202);
    const retry = await post(idem);
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as any).runId).toBe(((await first.json()) as any).runId);
  });

  it("does not count an idempotent retry that finds its run", async () => {
    const post = limitedPoster(2);
    const idem = { "idempotency-key": unique("idem") };
    expect((await post(idem)).status).toBe(202);
    expect((await post(idem)).status).toBe(200);
    expect((await post()).status).toBe(202);
  });

  it("does not count a request rejected for its Idempotency-Key", async () => {
    const post = limitedPoster(1);
    expect((await post({ "idempotency-key": "x".repeat(256) })).status).toBe(400);
    expect((await post()).status).toBe(202);
  });
});

describe("RUNS_PER_MINUTE without a round trip far from the limit", () => {
  it("goes ahead locally only while under half the known count, and only in its window", () => {
    const window = { count: 4, resetAt: 60_000 };
    expect(mayGoAhead(undefined, 10, 0)).toBe(false); // nothing heard yet: ask
    expect(mayGoAhead(window, 10, 1_000)).toBe(true);
    expect(mayGoAhead({ ...window, count: 5 }, 10, 1_000)).toBe(false); // near the limit: ask
    expect(mayGoAhead(window, 10, 60_000)).toBe(false); // a new window: ask
  });

  it("still counts every run: the limit holds exactly over sequential submissions", async () => {
    const post = limitedPoster(10);
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await post()).status);
    expect(codes).toEqual([...Array(10).fill(202), 429, 429]);
  });
});
