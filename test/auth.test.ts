import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";

const app = createApp();
const withKeys = { ...env, API_KEYS: "key-one, key-two" };
const plan = { steps: [{ id: "a", tool: "pass", params: { value: 1 } }] };

function call(path: string, key?: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return app.fetch(new Request(`http://edgestep.test${path}`, { ...init, headers }), withKeys);
}

async function create(key: string): Promise<string> {
  const res = await call("/v1/runs", key, { method: "POST", body: JSON.stringify(plan) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

describe("API keys", () => {
  it("rejects a /v1 request without a key with a JSON 401", async () => {
    const res = await call("/v1/runs", undefined, { method: "POST", body: JSON.stringify(plan) });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe("unauthorized");
  });

  it("rejects an unknown key", async () => {
    const res = await call("/v1/plans/validate", "nope", { method: "POST", body: JSON.stringify(plan) });
    expect(res.status).toBe(401);
  });

  it("leaves /healthz open", async () => {
    expect((await call("/healthz")).status).toBe(200);
  });

  it("shows a run only to the key that created it", async () => {
    const runId = await create("key-one");
    expect((await call(`/v1/runs/${runId}`, "key-one")).status).toBe(200);
    for (const path of [`/v1/runs/${runId}`, `/v1/runs/${runId}/results`, `/v1/runs/${runId}/events`, `/v1/runs/${runId}/steps/a`]) {
      expect((await call(path, "key-two")).status, path).toBe(404);
    }
    expect((await call(`/v1/runs/${runId}/cancel`, "key-two", { method: "POST" })).status).toBe(404);
  });

  it("scopes Idempotency-Key to the key that sent it", async () => {
    const headers = { "idempotency-key": "same-key" };
    const body = JSON.stringify(plan);
    const a = (await (await call("/v1/runs", "key-one", { method: "POST", body, headers })).json()) as any;
    const b = (await (await call("/v1/runs", "key-two", { method: "POST", body, headers })).json()) as any;
    const again = await call("/v1/runs", "key-one", { method: "POST", body, headers });
    expect(a.runId).not.toBe(b.runId);
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).runId).toBe(a.runId);
  });
});
