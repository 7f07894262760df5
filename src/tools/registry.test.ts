import { describe, expect, it } from "vitest";
import { parseRegistry, registryTool, type RegistryDeps } from "./registry";
import type { ToolCall } from "./tool";

const call: ToolCall = {
  runId: "run_x",
  stepId: "s",
  attempt: 1,
  idempotencyKey: "run_x:s",
  timeoutMs: 1000,
  signal: new AbortController().signal,
  maxOutputBytes: 4096,
  now: 0,
};

function deps(secrets: Record<string, string> = {}, services: Record<string, RegistryDeps["fetcher"]> = {}) {
  const seen: Request[] = [];
  const d: RegistryDeps = {
    fetcher: async (r) => (seen.push(r), Response.json({ ok: true })),
    service: (name) => services[name],
    secret: (name) => secrets[name],
    checkUrl: () => null,
  };
  return { seen, d };
}

describe("registry tools", () => {
  it("accepts TOOLS as an object or as a JSON string", () => {
    const tools = { a: { url: "https://api.test/a" } };
    expect(parseRegistry(JSON.stringify(tools))).toEqual(parseRegistry(tools));
  });

  it("rejects an entry with neither url nor service", () => {
    expect(() => parseRegistry({ a: { method: "GET" } })).toThrow(/exactly one of url or service/);
  });

  it("sends GET params as the query string, arrays joined", async () => {
    const { seen, d } = deps();
    const [entry] = Object.values(parseRegistry({ t: { url: "https://api.test/list" } }));
    await registryTool("t", entry!, d).invoke({ ids: ["a", "b"], limit: 5 }, call);
    expect(seen[0]!.url).toBe("https://api.test/list?ids=a%2Cb&limit=5");
  });

  it("sends POST params as a JSON body, or as a query with paramsAs", async () => {
    const { seen, d } = deps();
    const reg = parseRegistry({ b: { url: "https://api.test/b", method: "POST" }, q: { url: "https://api.test/q", method: "POST", paramsAs: "query" } });
    await registryTool("b", reg.b!, d).invoke({ x: 1 }, call);
    await registryTool("q", reg.q!, d).invoke({ x: 1 }, call);
    expect(await seen[0]!.json()).toEqual({ x: 1 });
    expect(seen[1]!.url).toBe("https://api.test/q?x=1");
  });

  it("fills ${secrets.NAME} in headers when sending", async () => {
    const { seen, d } = deps({ TOKEN: "s3cret" });
    const reg = parseRegistry({ t: { url: "https://api.test/", headers: { authorization: "Bearer ${secrets.TOKEN}" } } });
    await registryTool("t", reg.t!, d).invoke({}, call);
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer s3cret");
  });

  it("fails without calling when a secret is missing", async () => {
    const { seen, d } = deps();
    const reg = parseRegistry({ t: { url: "https://api.test/", headers: { authorization: "Bearer ${secrets.NOPE}" } } });
    const out = await registryTool("t", reg.t!, d).invoke({}, call);
    expect(out).toMatchObject({ ok: false, category: "tool_not_found" });
    expect(seen).toHaveLength(0);
  });

  it("calls a service binding by name", async () => {
    const calls: Request[] = [];
    const { d } = deps({}, { BILLING: async (r) => (calls.push(r), Response.json({ charged: true })) });
    const reg = parseRegistry({ charge: { service: "BILLING", path: "/charge", method: "POST" } });
    const out = await registryTool("charge", reg.charge!, d).invoke({ amount: 3 }, call);
    expect(out).toMatchObject({ ok: true, data: { charged: true } });
    expect(new URL(calls[0]!.url).pathname).toBe("/charge");
  });
});
