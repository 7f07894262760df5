/**
 * A programmable loopback upstream for tests, the benchmark and the chaos script.
 * Runs in Node (plain `node:http`). Every request is logged with the `Idempotency-Key`
 * and `X-Edgestep-Attempt` it carried, so tests can count executions.
 *
 *   GET  /facilities|/shipments|/contaminants|/inspections   the fake domain API (JSON)
 *   ANY  /echo                 { method, query, headers, body }
 *   ANY  /unauthorized         401 { error: "bad token <the Authorization header>" } (a careless API)
 *   ANY  /script/<key>?plan=503,503,200&retryAfter=1&delay=0,2000
 *                              the n-th call for <key> answers with the n-th status, after the n-th
 *                              delay in ms (in each list, the last repeats)
 *   ANY  /delay/<ms>           answers after <ms> milliseconds
 *   ANY  /hang                 never answers
 *   ANY  /gate/<key>?status=<n>  answers { ok, key, query } (status 200 unless given) once
 *                              POST /gate/<key>/open was called (at once after): a test decides
 *                              when a call completes
 *   ANY  /text                 a text/plain body
 *   ANY  /redirect?to=<url>&status=<n>   a redirect (307 by default) to <url>
 *   ANY  /deep?depth=<n>&kind=object|array   JSON nested <n> levels deep
 *   ANY  /bad-json | /huge | /endless   malformed answers: invalid JSON under a JSON content type;
 *                              8 MiB chunked (no content-length); headers and a chunk, then a trickle that never ends
 *   ANY  /work?ms=<n> | ?minMs=&maxMs=&seed=
 *                              answers after <n> ms (or a delay in [minMs, maxMs] derived from seed,
 *                              Idempotency-Key and attempt) with workAnswer(...): a value derived from
 *                              the Idempotency-Key. Its log entries also get `endedAt` and `aborted`.
 *   POST /jobs, /deploy/<target>, /undeploy   the demo operations of examples/deploy.json (demo-ops.ts)
 *   POST /planner, /planner/answer/<key>?plan=&body=&delay=   planners for replanning (planners.ts)
 *   GET  /_log?prefix=/script/x    the logged calls whose path starts with prefix (it and a gate's
 *                              /open are controls, not logged)
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { domainResponse } from "./data.ts";
import { handleDemoOps } from "./demo-ops.ts";
import { handlePlanners } from "./planners.ts";

export interface LoggedCall {
  method: string;
  path: string;
  query: string;
  idempotencyKey: string | null;
  attempt: number | null;
  authorization: string | null;
  /** When the request had arrived (see `clock`). */
  at: number;
  body: string;
  headers: Record<string, string>;
  /** `/work` only: when the answer was written (or the client went away first). */
  endedAt?: number;
  /** `/work` only: the client closed the connection before the answer was written. */
  aborted?: boolean;
}

/**
 * The log's clock: epoch milliseconds with a fraction (`Date.now()` counts whole ones). The
 * bench takes spans of a few milliseconds from it (a 100-step chain of `pass` steps, one hop),
 * which whole milliseconds would get wrong by up to half.
 */
const clock = () => performance.timeOrigin + performance.now();

export interface Upstream {
  url: string;
  calls: LoggedCall[];
  close(): Promise<void>;
}

export async function startUpstream(port = 0): Promise<Upstream> {
  const calls: LoggedCall[] = [];
  const counters = new Map<string, number>();
  /** `/gate/<key>`: whether it is open, and the answers held until it is. */
  const gates = new Map<string, { open: boolean; held: (() => void)[] }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });

  function gateOf(key: string) {
    const state = gates.get(key) ?? { open: false, held: [] };
    gates.set(key, state);
    return state;
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? "/", "http://upstream");
    const path = url.pathname;
    if (path === "/_log") {
      const prefix = url.searchParams.get("prefix") ?? "";
      return json(
        res,
        200,
        calls.filter((c) => c.path.startsWith(prefix)),
      );
    }
    // Opening a gate is the test's control, like /_log: not a call, so not logged.
    const opened = /^\/gate\/([^/]+)\/open$/.exec(path);
    if (opened) {
      const state = gateOf(opened[1]!);
      state.open = true;
      for (const answer of state.held.splice(0)) answer();
      return json(res, 200, { ok: true, opened: opened[1] });
    }
    const call: LoggedCall = {
      method: req.method ?? "GET",
      path,
      query: url.search,
      idempotencyKey: header(req, "idempotency-key"),
      attempt:
        header(req, "x-edgestep-attempt") === null
          ? null
          : Number(header(req, "x-edgestep-attempt")),
      authorization: header(req, "authorization"),
      at: clock(),
      body,
      headers: headerRecord(req),
    };
    calls.push(call);
    const domain = req.method === "GET" ? domainResponse(path, url.searchParams) : undefined;
    if (domain) return json(res, 200, domain);
    if (path === "/echo") {
      return json(res, 200, {
        method: req.method,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: parse(body),
      });
    }
    if (path === "/unauthorized")
      return json(res, 401, { error: `bad token ${call.authorization}` });
    if (path === "/text") {
      res.writeHead(200, { "content-type": "text/plain" });
      return void res.end("plain text");
    }
    if (path === "/hang") return;
    if (path === "/redirect") {
      res.writeHead(Number(url.searchParams.get("status") ?? 307), {
        location: url.searchParams.get("to") ?? "/echo",
      });
      return void res.end();
    }
    if (path === "/deep") {
      // ?depth=<n>&kind=object|array: JSON nested n levels deep around "leaf"
      const depth = Number(url.searchParams.get("depth") ?? 0);
      const [open, close] = url.searchParams.get("kind") === "array" ? ["[", "]"] : ['{"k":', "}"];
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(`${open.repeat(depth)}"leaf"${close.repeat(depth)}`);
    }
    if (path === "/bad-json") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end("{not json");
    }
    if (path === "/huge") {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, "x");
      let left = 128;
      const pump = (): void => {
        while (left > 0 && !res.destroyed) {
          left--;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!res.destroyed) res.end();
      };
      res.on("close", () => void (left = 0));
      return pump();
    }
    if (path === "/endless") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"items":[');
      const timer = setInterval(() => res.write("1,"), 100);
      res.on("close", () => clearInterval(timer));
      return;
    }
    const gate = /^\/gate\/([^/]+)$/.exec(path);
    if (gate) {
      const key = gate[1]!;
      const state = gateOf(key);
      const status = Number(url.searchParams.get("status") ?? 200);
      const answer = () =>
        json(res, status, { ok: status < 400, key, query: Object.fromEntries(url.searchParams) });
      return void (state.open ? answer() : state.held.push(answer));
    }
    const delay = /^\/delay\/(\d+)$/.exec(path);
    if (delay) {
      setTimeout(
        () =>
          json(res, 200, {
            ok: true,
            ms: Number(delay[1]),
            query: Object.fromEntries(url.searchParams),
          }),
        Number(delay[1]),
      );
      return;
    }
    if (path === "/work") {
      const ms = workDelayMs(call.idempotencyKey, call.attempt, url.searchParams);
      const timer = setTimeout(() => {
        call.endedAt = clock();
        json(res, 200, workAnswer(call.idempotencyKey, call.attempt, url.searchParams));
      }, ms);
      res.on("close", () => {
        if (res.writableFinished) return;
        clearTimeout(timer);
        call.endedAt = clock();
        call.aborted = true;
      });
      return;
    }
    if (handleDemoOps(req, res, url, body, json)) return;
    if (handlePlanners(req, res, url, body, json, counters)) return;
    const script = /^\/script\/([^/]+)$/.exec(path);
    if (script) {
      const key = script[1]!;
      const n = counters.get(key) ?? 0;
      counters.set(key, n + 1);
      // The n-th entry of a comma-separated list, the last repeating.
      const nth = (list: string) => {
        const entries = list.split(",");
        return Number(entries[Math.min(n, entries.length - 1)]);
      };
      const status = nth(url.searchParams.get("plan") ?? "200");
      const headers: Record<string, string> = {};
      const retryAfter = url.searchParams.get("retryAfter");
      if (retryAfter && status !== 200) headers["retry-after"] = retryAfter;
      const respond = () => json(res, status, { key, call: n + 1, status }, headers);
      const ms = nth(url.searchParams.get("delay") ?? "0");
      if (ms > 0) setTimeout(respond, ms);
      else respond();
      return;
    }
    json(res, 404, { error: `no such endpoint: ${path}` });
  }

  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The request's headers by lower-case name (repeated ones joined with ", "), read from the raw
 * lines: Node's `req.headers` leaves out a header named `__proto__`, which tests must see.
 */
function headerRecord(req: IncomingMessage): Record<string, string> {
  const pairs = new Map<string, string>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    pairs.set(name, pairs.has(name) ? `${pairs.get(name)}, ${value}` : value);
  }
  return Object.fromEntries(pairs);
}

/** The value `/work` derives from an Idempotency-Key (the first 24 hex digits of its SHA-256). */
export function workValue(key: string | null): string {
  return createHash("sha256")
    .update(key ?? "")
    .digest("hex")
    .slice(0, 24);
}

/** `/work`'s delay: `ms`, else in [minMs, maxMs], a function of seed, Idempotency-Key and attempt. */
export function workDelayMs(
  key: string | null,
  attempt: number | null,
  q: URLSearchParams,
): number {
  if (q.has("ms")) return Math.max(0, Number(q.get("ms")) || 0);
  const min = Math.max(0, Number(q.get("minMs") ?? 0) || 0);
  const max = Math.max(min, Number(q.get("maxMs") ?? min) || min);
  const h = createHash("sha256")
    .update(`${q.get("seed") ?? ""}|${key ?? ""}|${attempt ?? ""}`)
    .digest();
  return min + (h.readUInt32BE(0) % (max - min + 1));
}

/** `/work`'s answer: `value` is derived from the key; `input` echoes the query minus the timing parameters. */
export function workAnswer(key: string | null, attempt: number | null, q: URLSearchParams) {
  const input = Object.fromEntries(
    [...q].filter(([k]) => !["ms", "minMs", "maxMs", "seed"].includes(k)),
  );
  return { key, value: workValue(key), attempt, ms: workDelayMs(key, attempt, q), input };
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === "string" ? v : null;
}

function parse(body: string): unknown {
  try {
    return body === "" ? null : JSON.parse(body);
  } catch {
    return body;
  }
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
