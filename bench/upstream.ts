/**
 * `npm run bench`'s loopback upstream, in a Node process of its own (as a user's API would be):
 * test/upstream/server.ts on the port given first, and on the second a control port that reads
 * its log without adding to it:
 *   GET /calls?tag=<t>   [{ i, at, endedAt }]: the logged calls whose query has bench=<t>, with
 *                        their `i`, when each arrived and when it was answered (upstream clock:
 *                        epoch ms, with a fraction)
 *   POST /reset          forgets the log (the bench calls it between rounds)
 *   GET /healthz         200
 * Usage: node bench/upstream.ts <port> <control-port>
 */
import { createServer, type ServerResponse } from "node:http";
import { startUpstream } from "../test/upstream/server.ts";

const [port, controlPort] = process.argv.slice(2).map(Number);
if (!Number.isInteger(port) || !Number.isInteger(controlPort))
  throw new Error("usage: node bench/upstream.ts <port> <control-port>");

const upstream = await startUpstream(port);

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://control");
  if (url.pathname === "/healthz") return json(res, { ok: true, url: upstream.url });
  if (url.pathname === "/reset" && req.method === "POST") {
    upstream.calls.length = 0;
    return json(res, { ok: true });
  }
  if (url.pathname === "/calls") {
    const tag = url.searchParams.get("tag") ?? "";
    const calls = [];
    for (const call of upstream.calls) {
      const q = new URLSearchParams(call.query);
      if (q.get("bench") === tag)
        calls.push({ i: Number(q.get("i")), at: call.at, endedAt: call.endedAt ?? null });
    }
    return json(res, calls);
  }
  res.writeHead(404).end();
});
control.listen(controlPort, "127.0.0.1");

const stop = () => {
  control.close();
  void upstream.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
