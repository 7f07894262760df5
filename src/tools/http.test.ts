import { describe, expect, it } from "vitest";
import { checkUrl, parseAllowedHosts } from "../engine/egress";
import { httpParamsSchema, httpTool } from "./http";
import { sendHttp } from "./http-client";
import type { ToolCall } from "./tool";

function call(overrides: Partial<ToolCall> = {}): ToolCall {
  return {
    runId: "run_x",
    stepId: "s",
    attempt: 2,
    idempotencyKey: "run_x:s",
    timeoutMs: 1000,
    signal: new AbortController().signal,
    maxOutputBytes: 1024,
    maxOutputDepth: 128,
    now: 0,
    ...overrides,
  };
}

/** A fetcher that records requests and answers with `respond`. */
function fake(respond: (req: Request) => Response | Promise<Response>) {
  const seen: Request[] = [];
  return { seen, fetcher: async (req: Request) => (seen.push(req), respond(req)) };
}

const allowAll = (url: string) => checkUrl(url, null)?.message ?? null;

describe("http tool", () => {
  it("sends Idempotency-Key and X-Edgestep-Attempt", async () => {
    const f = fake(() => Response.json({}));
    await httpTool(f.fetcher, allowAll).invoke({ url: "https://api.test/x" }, call());
    expect(f.seen[0]!.headers.get("idempotency-key")).toBe("run_x:s");
    expect(f.seen[0]!.headers.get("x-edgestep-attempt")).toBe("2");
  });

  it("joins array query values with commas", async () => {
    const f = fake(() => Response.json({}));
    await httpTool(f.fetcher, allowAll).invoke(
      { url: "https://api.test/x", query: { ids: ["S1", "S2"], n: 3 } },
      call(),
    );
    expect(new URL(f.seen[0]!.url).search).toBe("?ids=S1%2CS2&n=3");
  });

  it("names the path of a param that is wrong once resolved, not zod's dump", async () => {
    const out = await httpTool(fake(() => Response.json({})).fetcher, allowAll).invoke(
      { url: 5, method: "FETCH" },
      call(),
    );
    expect(out).toMatchObject({ ok: false, category: "invalid_data" });
    const message = (out as { message: string }).message;
    expect(message).toMatch(/^invalid http params: url: .*; method: /);
    expect(message).not.toContain("[");
  });

  it("sends a non-string body as JSON", async () => {
    const f = fake(() => Response.json({}));
    await httpTool(f.fetcher, allowAll).invoke(
      { url: "https://api.test/x", method: "post", body: { a: [1] } },
      call(),
    );
    expect(f.seen[0]!.method).toBe("POST");
    expect(f.seen[0]!.headers.get("content-type")).toBe("application/json");
    expect(await f.seen[0]!.text()).toBe('{"a":[1]}');
  });

  it("fails a JSON answer nested deeper than maxOutputDepth as invalid_data, before parsing it", async () => {
    const deep = (n: number) => () =>
      new Response(`${"[".repeat(n)}${"]".repeat(n)}`, {
        headers: { "content-type": "application/json" },
      });
    const tool = (n: number) => httpTool(fake(deep(n)).fetcher, allowAll);
    expect(await tool(3).invoke({ url: "https://api.test/" }, call({ maxOutputDepth: 3 }))).toEqual(
      { ok: true, data: [[[]]], status: 200 },
    );
    expect(await tool(4).invoke({ url: "https://api.test/" }, call({ maxOutputDepth: 3 }))).toEqual(
      {
        ok: false,
        category: "invalid_data",
        message: "response is nested deeper than 3 levels (MAX_OUTPUT_DEPTH)",
        status: 200,
      },
    );
  });

  it("parses JSON responses and keeps text as text", async () => {
    const json = await httpTool(fake(() => Response.json({ a: 1 })).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call(),
    );
    const text = await httpTool(fake(() => new Response("hello")).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call(),
    );
    expect(json).toEqual({ ok: true, data: { a: 1 }, status: 200 });
    expect(text).toEqual({ ok: true, data: "hello", status: 200 });
  });

  it("fails invalid JSON with a JSON content type as invalid_data", async () => {
    const res = () =>
      new Response("{not json", { headers: { "content-type": "application/json" } });
    const out = await httpTool(fake(res).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call(),
    );
    expect(out).toMatchObject({ ok: false, category: "invalid_data" });
  });

  it("stops reading a body larger than the output limit", async () => {
    let pulled = 0;
    const endless = new ReadableStream({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(512));
      },
    });
    const out = await httpTool(fake(() => new Response(endless)).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call(),
    );
    expect(out).toMatchObject({ ok: false, category: "output_too_large" });
    // Read up to 4 × maxOutputBytes (1,024 here), in 512-byte chunks: then it stops.
    expect(pulled).toBeLessThanOrEqual((4 * 1024) / 512 + 2);
  });

  it("keeps a pretty-printed answer whose data fits the output limit, though its body does not", async () => {
    const data = { items: Array.from({ length: 20 }, (_, i) => ({ id: `S${i}` })) };
    const pretty = JSON.stringify(data, null, 8);
    expect(pretty.length).toBeGreaterThan(1024);
    expect(JSON.stringify(data).length).toBeLessThan(1024);
    const res = () => new Response(pretty, { headers: { "content-type": "application/json" } });
    const out = await httpTool(fake(res).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call({ maxOutputBytes: 1024 }),
    );
    expect(out).toMatchObject({ ok: true, data });
  });

  it("times out a body that never ends", async () => {
    const stalled = new ReadableStream({
      start: (c) => c.enqueue(new TextEncoder().encode("[1,")),
    });
    const out = await httpTool(fake(() => new Response(stalled)).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call({ timeoutMs: 100 }),
    );
    expect(out).toMatchObject({ ok: false, category: "timeout" });
  });

  it("reports a failed connection as network", async () => {
    const out = await httpTool(async () => {
      throw new TypeError("connection refused");
    }, allowAll).invoke({ url: "https://api.test/" }, call());
    expect(out).toMatchObject({ ok: false, category: "network" });
  });

  it("categorizes 429 and reads Retry-After", async () => {
    const res = () => new Response("slow down", { status: 429, headers: { "retry-after": "7" } });
    const out = await httpTool(fake(res).fetcher, allowAll).invoke(
      { url: "https://api.test/" },
      call(),
    );
    expect(out).toMatchObject({
      ok: false,
      category: "rate_limited",
      status: 429,
      retryAfterMs: 7000,
    });
  });

  it("checks a URL built at run time against ALLOWED_HOSTS before calling", async () => {
    const allowed = parseAllowedHosts("api.test,*.trusted.test");
    const f = fake(() => Response.json({}));
    const tool = httpTool(f.fetcher, (url) => checkUrl(url, allowed)?.message ?? null);
    const denied = await tool.invoke({ url: "https://evil.test/steal" }, call());
    const ok = await tool.invoke({ url: "https://a.trusted.test/" }, call());
    expect(denied).toMatchObject({ ok: false, category: "egress_denied" });
    expect(ok).toMatchObject({ ok: true });
    expect(f.seen).toHaveLength(1);
  });
});

describe("http tool: headers", () => {
  it("rejects a header name or value that would break the request, in its params schema", () => {
    expect(
      httpParamsSchema.safeParse({ url: "https://api.test/", headers: { "a\nb": "x" } }).success,
    ).toBe(false);
    expect(
      httpParamsSchema.safeParse({ url: "https://api.test/", headers: { a: "x\r\nInjected: 1" } })
        .success,
    ).toBe(false);
    expect(
      httpParamsSchema.safeParse({ url: "https://api.test/", headers: { a: "pässwörd" } }).success,
    ).toBe(false);
    expect(
      httpParamsSchema.safeParse({
        url: "https://api.test/",
        headers: { "X-Ok": "${steps.a.data}", Accept: "application/json; q=0.9\t" },
      }).success,
    ).toBe(true);
  });

  it("a value that turns out not ASCII at run time fails without a call, and without the value", async () => {
    const f = fake(() => Response.json({}));
    const out = await sendHttp(
      { url: "https://api.test/", method: "GET", headers: { "X-Token": "tök-SECRETX" } },
      call(),
      f.fetcher,
      allowAll,
    );
    expect(out).toMatchObject({ ok: false, category: "invalid_data" });
    expect(JSON.stringify(out)).not.toContain("SECRETX");
    expect(f.seen).toHaveLength(0);
  });

  it("a header value that is invalid once sent fails as invalid_data (not retried), without a call", async () => {
    const f = fake(() => Response.json({}));
    const out = await sendHttp(
      { url: "https://api.test/", method: "GET", headers: { a: "x\ny" } },
      call(),
      f.fetcher,
      allowAll,
    );
    expect(out).toMatchObject({
      ok: false,
      category: "invalid_data",
      message: expect.stringMatching(/header/),
    });
    expect(f.seen).toHaveLength(0);
  });
});

describe("http tool: redirects", () => {
  const redirect = (status: number, location: string) =>
    new Response(null, { status, headers: { location } });
  /** Answers `/start` with a redirect, everything else with its method and Authorization. */
  const hops = (status: number, location: string) =>
    fake((req) =>
      new URL(req.url).pathname === "/start"
        ? redirect(status, location)
        : Response.json({
            at: req.url,
            method: req.method,
            auth: req.headers.get("authorization"),
            proxy: req.headers.get("proxy-authorization"),
          }),
    );
  const allowed = parseAllowedHosts("api.test,other.test");
  const checked = (url: string) => checkUrl(url, allowed)?.message ?? null;

  it("follows a redirect to an allowed host, itself", async () => {
    const f = hops(307, "/next");
    const out = await httpTool(f.fetcher, checked).invoke(
      { url: "https://api.test/start", method: "POST", body: { a: 1 } },
      call(),
    );
    expect(out).toMatchObject({ ok: true, data: { at: "https://api.test/next", method: "POST" } });
    expect(f.seen.map((r) => r.redirect)).toEqual(["manual", "manual"]);
  });

  it("refuses a redirect that leaves ALLOWED_HOSTS, without calling it", async () => {
    const f = hops(302, "https://evil.test/steal");
    const out = await httpTool(f.fetcher, checked).invoke(
      { url: "https://api.test/start" },
      call(),
    );
    expect(out).toMatchObject({
      ok: false,
      category: "egress_denied",
      message: expect.stringContaining("https://evil.test"),
    });
    expect(f.seen).toHaveLength(1);
  });

  it("drops Authorization and Proxy-Authorization on a redirect to another origin, keeps them on the same origin", async () => {
    const headers = { Authorization: "Bearer s3cret", "Proxy-Authorization": "Basic cHJveHk=" };
    const cross = await httpTool(hops(302, "https://other.test/x").fetcher, checked).invoke(
      { url: "https://api.test/start", headers },
      call(),
    );
    const same = await httpTool(hops(302, "/x").fetcher, checked).invoke(
      { url: "https://api.test/start", headers },
      call(),
    );
    expect(cross).toMatchObject({ ok: true, data: { auth: null, proxy: null } });
    expect(same).toMatchObject({
      ok: true,
      data: { auth: "Bearer s3cret", proxy: "Basic cHJveHk=" },
    });
  });

  it("a 303 continues as a GET without the body", async () => {
    const out = await httpTool(hops(303, "/done").fetcher, checked).invoke(
      { url: "https://api.test/start", method: "PUT", body: "x" },
      call(),
    );
    expect(out).toMatchObject({ ok: true, data: { method: "GET" } });
  });

  it("fails after more than 5 redirects", async () => {
    const f = fake(() => redirect(302, "/start"));
    const out = await httpTool(f.fetcher, checked).invoke(
      { url: "https://api.test/start" },
      call(),
    );
    expect(out).toMatchObject({
      ok: false,
      category: "invalid_data",
      message: expect.stringMatching(/redirects/),
    });
    expect(f.seen).toHaveLength(6);
  });
});
