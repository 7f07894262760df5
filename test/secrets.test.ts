import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, execute, results, runCalls, runStub, upstreamCalls } from "./helpers";

const SECRET = env.UPSTREAM_TOKEN;

/** Everything a run exposes or stores, as text: the API's answers and every SQLite table. */
async function everythingOf(runId: string, stepIds: string[]): Promise<string[]> {
  const paths = [``, `/results`, `/events?limit=1000`, ...stepIds.map((id) => `/steps/${id}`)];
  const responses = await Promise.all(
    paths.map(async (p) => (await api(`/v1/runs/${runId}${p}`)).text()),
  );
  // Every table of the run's checkpoint, dumped as text.
  const tables = await runStub(runId).tables();
  const dump = Object.values(tables)
    .map((rows) => JSON.stringify(rows))
    .join("\n");
  expect(dump.length).toBeGreaterThan(100);
  return [...responses, dump];
}

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

    for (const text of await everythingOf(run.runId, ["call", "fail"]))
      expect(text).not.toContain(SECRET);
  });

  it("echoed back in a response's data are stored as [redacted]", async () => {
    const run = await execute({
      webhook: { url: "http://127.0.0.1:1/hook" },
      steps: [{ id: "echoed", tool: "secure_echo", params: { n: 1 } }],
    });
    const [sent] = await runCalls(run.runId, "/echo");
    expect(sent?.headers["x-api-key"]).toBe(SECRET);

    const [result] = await results(run.runId);
    expect(result.data.headers).toMatchObject({
      authorization: "Bearer [redacted]",
      "x-api-key": "[redacted]",
    });
    for (const text of await everythingOf(run.runId, ["echoed"]))
      expect(text).not.toContain(SECRET);
  });

  it("echoed back in an error body are stored as [redacted]", async () => {
    const run = await execute({
      webhook: { url: "http://127.0.0.1:1/hook" },
      steps: [{ id: "refused", tool: "secure_unauthorized" }],
    });
    const [sent] = await runCalls(run.runId, "/unauthorized");
    expect(sent?.authorization).toBe(`Bearer ${SECRET}`);

    const [result] = await results(run.runId);
    expect(result.error.message).toContain("bad token Bearer [redacted]");
    for (const text of await everythingOf(run.runId, ["refused"]))
      expect(text).not.toContain(SECRET);
  });

  it("cannot be referenced by a plan", async () => {
    const res = await api("/v1/runs", {
      method: "POST",
      body: JSON.stringify({
        steps: [{ tool: "pass", params: { value: "${secrets.UPSTREAM_TOKEN}" } }],
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.issues[0].path).toBe("steps.0.params.value");
  });
});
