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
  maxOutputDepth: 128,
  now: 0,
};

function deps(
  secrets: Record<string, string> = {},
  services: Record<string, RegistryDeps["fetcher"]> = {},
) {
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

  it("rejects an entry named like a built-in tool, which a plan could never call", () => {
    expect(() => parseRegistry({ pass: { url: "https://api.test/a" } })).toThrow(
      /"pass" is a built-in tool/,
    );
    expect(() => parseRegistry({ passes: { url: "https://api.test/a" } })).not.toThrow();
  });

  it("rejects params sent as the body of a GET or HEAD (fetch would drop them)", () => {
    for (const method of ["GET", "head"])
      expect(() =>
        parseRegistry({ a: { url: "https://api.test/a", method, paramsAs: "body" } }),
      ).toThrow(/paramsAs must be "query"/);
    expect(() =>
      parseRegistry({ a: { url: "https://api.test/a", method: "POST", paramsAs: "body" } }),
    ).not.toThrow();
  });

  it("sends GET params as the query string, arrays joined", async () => {
    const { seen, d } = deps();
    const [entry] = Object.values(parseRegistry({ t: { url: "https://api.test/list" } }));
    await registryTool("t", entry!, d).invoke({ ids: ["a", "b"], limit: 5 }, call);
    expect(seen[0]!.url).toBe("https://api.test/list?ids=a%2Cb&limit=5");
  });

  it("sends POST params as a JSON body, or as a query with paramsAs", async () => {
    const { seen, d } = deps();
    const reg = parseRegistry({
      b: { url: "https://api.test/b", method: "POST" },
      q: { url: "https://api.test/q", method: "POST", paramsAs: "query" },
    });
    await registryTool("b", reg.b!, d).invoke({ x: 1 }, call);
    await registryTool("q", reg.q!, d).invoke({ x: 1 }, call);
    expect(await seen[0]!.json()).toEqual({ x: 1 });
    expect(seen[1]!.url).toBe("https://api.test/q?x=1");
  });

  it("fills ${secrets.NAME} in headers when sending", async () => {
    const { seen, d } = deps({ TOKEN: "s3cret" });
    const reg = parseRegistry({
      t: { url: "https://api.test/", headers: { authorization: "Bearer ${secrets.TOKEN}" } },
    });
    await registryTool("t", reg.t!, d).invoke({}, call);
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer s3cret");
  });

  it("fails without calling when a secret is missing", async () => {
    const { seen, d } = deps();
    const reg = parseRegistry({
      t: { url: "https://api.test/", headers: { authorization: "Bearer ${secrets.NOPE}" } },
    });
    const out = await registryTool("t", reg.t!, d).invoke({}, call);
    expect(out).toMatchObject({ ok: false, category: "tool_not_found" });
    expect(seen).toHaveLength(0);
  });

  it("fails without calling, and without the value in its message, when a secret is not ASCII", async () => {
    const { seen, d } = deps({ TOKEN: "pässwörd-SECRETX" });
    const reg = parseRegistry({
      t: { url: "https://api.test/", headers: { authorization: "Bearer ${secrets.TOKEN}" } },
    });
    const out = await registryTool("t", reg.t!, d).invoke({}, call);
    expect(out).toMatchObject({
      ok: false,
      category: "invalid_data",
      message: expect.stringContaining('header "authorization"'),
    });
    expect(JSON.stringify(out)).not.toContain("SECRETX");
    expect(seen).toHaveLength(0);
  });

  it.each([
    [{ headers: { "Bad Header": "x" } }, "not a valid HTTP header name"],
    [{ headers: { "X-Key": "ÿtoken" } }, "printable ASCII"],
    [{ headers: { "X-Key": "a\r\nInjected: 1" } }, "printable ASCII"],
    [{ method: "FOO BAR" }, "HTTP token"],
  ])("refuses an entry whose request could never be sent: %j", (entry, message) => {
    expect(() => parseRegistry({ t: { url: "https://api.test/", ...entry } })).toThrow(message);
  });

  it("calls a service binding by name", async () => {
    const calls: Request[] = [];
    const { d } = deps(
      {},
      { BILLING: async (r) => (calls.push(r), Response.json({ charged: true })) },
    );
    const reg = parseRegistry({ charge: { service: "BILLING", path: "/charge", method: "POST" } });
    const out = await registryTool("charge", reg.charge!, d).invoke({ amount: 3 }, call);
    expect(out).toMatchObject({ ok: true, data: { charged: true } });
    expect(new URL(calls[0]!.url).pathname).toBe("/charge");
  });
});

/** A registry tool with `headers`, whose upstream answers with `respond`; `seen` logs every request. */
function echoTool(
  secret: string,
  headers: Record<string, string>,
  respond: (r: Request) => Response | Promise<Response>,
) {
  const seen: Request[] = [];
  const d: RegistryDeps = {
    fetcher: async (r) => (seen.push(r), respond(r)),
    service: () => undefined,
    secret: (name) => (name === "TOKEN" ? secret : undefined),
    checkUrl: () => null,
  };
  const reg = parseRegistry({ t: { url: "https://api.test/echo", method: "POST", headers } });
  return { seen, invoke: () => registryTool("t", reg.t!, d).invoke({}, call) };
}

describe("registry tools: secrets echoed back", () => {
  const bearer = { authorization: "Bearer ${secrets.TOKEN}" };

  it("are redacted from data, in strings and object keys at any depth", async () => {
    const tok = "tok-deep-3f9a";
    const { invoke } = echoTool(tok, bearer, (r) =>
      Response.json({
        headers: { authorization: r.headers.get("authorization") },
        list: [[`x ${tok} y`]],
        [tok]: true,
      }),
    );
    expect(await invoke()).toEqual({
      ok: true,
      status: 200,
      data: {
        headers: { authorization: "Bearer [redacted]" },
        list: [["x [redacted] y"]],
        "[redacted]": true,
      },
    });
  });

  it("are redacted from a text answer", async () => {
    const tok = "tok-text-81c2";
    const { invoke } = echoTool(
      tok,
      bearer,
      () => new Response(`you sent ${tok}`, { headers: { "content-type": "text/plain" } }),
    );
    expect(await invoke()).toMatchObject({ ok: true, data: "you sent [redacted]" });
  });

  it("are redacted when echoed as a JSON number", async () => {
    const { invoke } = echoTool(
      "7315904426",
      { "x-pin": "${secrets.TOKEN}" },
      () => new Response('{"pin":7315904426}', { headers: { "content-type": "application/json" } }),
    );
    expect(await invoke()).toMatchObject({ ok: true, data: { pin: "[redacted]" } });
  });

  it("are redacted from an error message", async () => {
    const tok = "tok-401-5e77";
    const { invoke } = echoTool(
      tok,
      bearer,
      (r) => new Response(`bad token ${r.headers.get("authorization")}`, { status: 401 }),
    );
    expect(await invoke()).toMatchObject({
      ok: false,
      category: "client_error",
      message: "HTTP 401: bad token Bearer [redacted]",
    });
  });

  it("are redacted before an error body is cut, leaving no part of them", async () => {
    const tok = "tok-cut-0123456789abcdef";
    const { invoke } = echoTool(
      tok,
      bearer,
      () => new Response(`${"x".repeat(195)}${tok}`, { status: 400 }),
    );
    const out = (await invoke()) as { message: string };
    expect(out.message).toContain("[red");
    expect(out.message).not.toContain("tok-");
  });

  it("are redacted in their JSON-escaped form from an error body", async () => {
    const tok = 'tok"quoted\\slash';
    const { invoke } = echoTool(tok, { "x-key": "${secrets.TOKEN}" }, (r) =>
      Response.json({ error: `bad key ${r.headers.get("x-key")}` }, { status: 403 }),
    );
    const out = (await invoke()) as { message: string };
    expect(out.message).toBe('HTTP 403: {"error":"bad key [redacted]"}');
  });

  it("leave no excerpt in the message of an invalid JSON answer", async () => {
    const tok = "tok-json-9d41c0";
    const { invoke } = echoTool(
      tok,
      bearer,
      () => new Response(`{"a": ${tok}}`, { headers: { "content-type": "application/json" } }),
    );
    const out = (await invoke()) as { ok: boolean; category: string; message: string };
    expect(out).toMatchObject({ ok: false, category: "invalid_data" });
    expect(out.message).not.toContain("tok-");
  });
});

describe("registry tools: redirects", () => {
  const redirectTo = (location: string) => (r: Request) =>
    r.url.startsWith("https://api.test/echo")
      ? new Response(null, { status: 307, headers: { location } })
      : Response.json({});

  it("drop every header holding a secret when a redirect changes origin", async () => {
    const { seen, invoke } = echoTool(
      "tok-cross-4b2e",
      { "x-api-key": "k=${secrets.TOKEN}", "x-plain": "v" },
      redirectTo("https://other.test/"),
    );
    await invoke();
    expect(seen.map((r) => r.url)).toEqual(["https://api.test/echo", "https://other.test/"]);
    expect(seen[1]!.headers.get("x-api-key")).toBeNull();
    expect(seen[1]!.headers.get("x-plain")).toBe("v");
  });

  it("keep headers holding a secret on a same-origin redirect", async () => {
    const { seen, invoke } = echoTool(
      "tok-same-77a0",
      { "x-api-key": "${secrets.TOKEN}" },
      redirectTo("/moved"),
    );
    await invoke();
    expect(seen[1]!.url).toBe("https://api.test/moved");
    expect(seen[1]!.headers.get("x-api-key")).toBe("tok-same-77a0");
  });
});
