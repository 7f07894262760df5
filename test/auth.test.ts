import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { settle, unique, upstreamUrl } from "./helpers";

const app = createApp();
const withKeys = { ...env, API_KEYS: "key-one, key-two" };
const plan = { steps: [{ id: "a", tool: "pass", params: { value: 1 } }] };

function call(path: string, key?: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return app.fetch(new Request(`http://edgestep.test${path}`, { ...init, headers }), withKeys);
}

async function create(key: string, body: unknown = plan): Promise<string> {
  const res = await call("/v1/runs", key, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

/** What the owner sees of a run: its status and its whole event log (every change is an event). */
async function seenByOwner(runId: string): Promise<{ status: string; events: unknown[] }> {
  const s = (await (await call(`/v1/runs/${runId}`, "key-one")).json()) as any;
  const page = (await (await call(`/v1/runs/${runId}/events?limit=1000`, "key-one")).json()) as any;
  return { status: s.status, events: page.events };
}

/** A stranger's POST to a control route of key-one's run: 404, and the run is untouched. */
async function expectStrangerCannot(
  runId: string,
  action: string,
  body: unknown,
  ownersStatus: string,
) {
  const before = await seenByOwner(runId);
  expect(before.status).toBe(ownersStatus);
  const res = await call(`/v1/runs/${runId}/${action}`, "key-two", {
    method: "POST",
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(404);
  expect(((await res.json()) as any).error.code).toBe("not_found");
  expect(await seenByOwner(runId)).toEqual(before);
}

describe("API keys", () => {
  it("rejects a /v1 request without a key with a JSON 401", async () => {
    const res = await call("/v1/runs", undefined, { method: "POST", body: JSON.stringify(plan) });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe("unauthorized");
  });

  it("rejects an unknown key", async () => {
    const res = await call("/v1/plans/validate", "nope", {
      method: "POST",
      body: JSON.stringify(plan),
    });
    expect(res.status).toBe(401);
  });

  it("leaves /healthz open", async () => {
    expect((await call("/healthz")).status).toBe(200);
  });

  it("shows a run only to the key that created it", async () => {
    const runId = await create("key-one");
    expect((await call(`/v1/runs/${runId}`, "key-one")).status).toBe(200);
    for (const path of [
      `/v1/runs/${runId}`,
      `/v1/runs/${runId}/results`,
      `/v1/runs/${runId}/plan`,
      `/v1/runs/${runId}/events`,
      `/v1/runs/${runId}/steps/a`,
    ]) {
      expect((await call(path, "key-two")).status, path).toBe(404);
    }
    expect((await call(`/v1/runs/${runId}/cancel`, "key-two", { method: "POST" })).status).toBe(
      404,
    );
  });

  it("answers another key's resume of a paused run with 404 and leaves it paused", async () => {
    const runId = await create("key-one", {
      config: { mode: { type: "bounded", iterations: 1 } },
      steps: [...plan.steps, { id: "b", tool: "pass", params: { value: 2 }, dependsOn: ["a"] }],
    });
    await settle(runId);
    await expectStrangerCannot(runId, "resume", { iterations: 1 }, "paused");
  });

  it("answers another key's retry of a failed run with 404 and leaves it failed", async () => {
    const url = `${upstreamUrl}/script/${unique("auth-retry")}?plan=404,200`;
    const runId = await create("key-one", {
      steps: [{ id: "a", tool: "http", params: { url }, retry: { maxRetries: 0 } }],
    });
    await settle(runId);
    await expectStrangerCannot(runId, "retry", {}, "failed");
  });

  it("answers another key's approval of a run at the risk gate with 404 and leaves it waiting", async () => {
    const runId = await create("key-one", {
      config: { requireApprovalForRisk: "high" },
      steps: [{ id: "a", tool: "pass", params: { value: 1 }, risk: "high" }],
    });
    await expectStrangerCannot(runId, "approve", { approved: true }, "waiting");
  });

  it("scopes Idempotency-Key to the key that sent it", async () => {
    const headers = { "idempotency-key": "same-key" };
    const body = JSON.stringify(plan);
    const a = (await (
      await call("/v1/runs", "key-one", { method: "POST", body, headers })
    ).json()) as any;
    const b = (await (
      await call("/v1/runs", "key-two", { method: "POST", body, headers })
    ).json()) as any;
    const again = await call("/v1/runs", "key-one", { method: "POST", body, headers });
    expect(a.runId).not.toBe(b.runId);
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).runId).toBe(a.runId);
  });
});

describe("Authorization header", () => {
  async function expectJson401(authorization: string) {
    const res = await app.fetch(
      new Request("http://edgestep.test/v1/plans/validate", {
        method: "POST",
        body: JSON.stringify(plan),
        headers: { authorization },
      }),
      withKeys,
    );
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(((await res.json()) as any).error.code).toBe("unauthorized");
  }

  it("answers a Basic scheme with a JSON 401", async () => {
    await expectJson401(`Basic ${btoa("key-one:")}`);
  });

  it("answers a bare Bearer without a key with a JSON 401", async () => {
    await expectJson401("Bearer");
  });

  it("answers a key outside RFC 6750's token charset (Bearer key!one) with a JSON 401", async () => {
    await expectJson401("Bearer key!one");
  });

  it("accepts a configured key holding characters such as ! % : @", async () => {
    const key = "k!y%1:u@h";
    const res = await app.fetch(
      new Request("http://edgestep.test/v1/plans/validate", {
        method: "POST",
        body: JSON.stringify(plan),
        headers: { authorization: `Bearer ${key}` },
      }),
      { ...env, API_KEYS: `other, ${key}` },
    );
    expect(res.status).toBe(200);
  });
});

/** wrangler.toml's [env.production] sets REQUIRE_API_KEYS: without API_KEYS, /v1 is refused. */
describe("a deployment that requires API keys", () => {
  const validate = (bindings: Record<string, unknown>, key?: string) =>
    app.fetch(
      new Request("http://edgestep.test/v1/plans/validate", {
        method: "POST",
        body: JSON.stringify(plan),
        headers: key ? { authorization: `Bearer ${key}` } : {},
      }),
      { ...env, ...bindings },
    );

  it("refuses /v1 requests with a 503 that says what to set while API_KEYS is unset", async () => {
    for (const REQUIRE_API_KEYS of ["true", true, "TRUE", "1"]) {
      const res = await validate({ REQUIRE_API_KEYS, API_KEYS: "" });
      expect(res.status).toBe(503);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("auth_not_configured");
      expect(body.error.message).toMatch(/wrangler secret put API_KEYS/);
      expect(body.error.message).toMatch(/ALLOW_UNAUTHENTICATED=true/);
    }
  });

  it("keeps /healthz open, and callbacks (their token is the credential)", async () => {
    const bindings = { ...env, REQUIRE_API_KEYS: "true" };
    expect((await app.fetch(new Request("http://edgestep.test/healthz"), bindings)).status).toBe(
      200,
    );
    const callback = await app.fetch(
      new Request("http://edgestep.test/v1/callbacks/unknown-token", {
        method: "POST",
        body: JSON.stringify({ output: 1 }),
      }),
      bindings,
    );
    expect(callback.status).toBe(404);
  });

  it("serves without authentication when explicitly opted out", async () => {
    const res = await validate({ REQUIRE_API_KEYS: "true", ALLOW_UNAUTHENTICATED: "true" });
    expect(res.status).toBe(200);
  });

  it("fails closed on a setting it cannot read: 500 misconfigured naming it, never auth off", async () => {
    for (const bindings of [
      { API_KEYS: "," },
      { API_KEYS: " , " },
      { REQUIRE_API_KEYS: "yes", API_KEYS: "" },
      { REQUIRE_API_KEYS: "true", ALLOW_UNAUTHENTICATED: "maybe" },
    ]) {
      const res = await validate(bindings);
      expect(res.status, JSON.stringify(bindings)).toBe(500);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("misconfigured");
      expect(body.error.message).toMatch(/API_KEYS|ALLOW_UNAUTHENTICATED/);
    }
  });

  it("authenticates as usual once API_KEYS is set", async () => {
    expect((await validate({ REQUIRE_API_KEYS: "true", API_KEYS: "k1" }, "k1")).status).toBe(200);
    expect((await validate({ REQUIRE_API_KEYS: "true", API_KEYS: "k1" })).status).toBe(401);
  });
});
