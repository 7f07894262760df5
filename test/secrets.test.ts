import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, execute, runStub, upstreamCalls } from "./helpers";

const SECRET = env.UPSTREAM_TOKEN;

describe("registry secrets", () => {
  it("are sent to the upstream and appear nowhere in run state, status, events or results", async () => {
    const before = (await upstreamCalls("/script/secure-call")).length;
    const run = await execute({
      webhook: { url: "http://127.0.0.1:1/hook" },
      steps: [
        { id: "call", tool: "secure_call", params: { q: 1 } },
        { id: "fail", tool: "secure_call", params: { plan: "401" }, dependsOn: ["call"] },
      ],
    });
    const calls = (await upstreamCalls("/script/secure-call")).slice(before);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.authorization === `Bearer ${SECRET}`)).toBe(true);

    const responses = await Promise.all(
      [``, `/results`, `/events?limit=1000`, `/steps/call`, `/steps/fail`].map(async (p) => (await api(`/v1/runs/${run.runId}${p}`)).text()),
    );
    for (const body of responses) expect(body).not.toContain(SECRET);

    // Every table of the run's checkpoint, dumped as text.
    const dump = await runInDurableObject(runStub(run.runId), (_, state) => {
      const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'").toArray();
      return tables
        .map((t) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${String(t.name)}"`).toArray()))
        .join("\n");
    });
    expect(dump.length).toBeGreaterThan(100);
    expect(dump).not.toContain(SECRET);
  });

  it("cannot be referenced by a plan", async () => {
    const res = await api("/v1/runs", {
      method: "POST",
      body: JSON.stringify({ steps: [{ tool: "pass", params: { value: "${secrets.UPSTREAM_TOKEN}" } }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.issues[0].path).toBe("steps.0.params.value");
  });
});
