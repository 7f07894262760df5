/**
 * Demo operations for examples/deploy.json on the loopback upstream:
 *   POST /jobs            a long job using the callback pattern: answers 202 at once, then
 *                         POSTs `{ output }` to the `callbackUrl` it was given (after `?delayMs=`, default 300)
 *   POST /deploy/<target> after `?delayMs=` (default 250): 200 `{ target, deployed: true, concurrent }`
 *                         (`concurrent`: deploys of the same run, by Idempotency-Key, in flight when this
 *                         one started, itself included), or 500 when the target's name contains "fail"
 *   POST /undeploy        200 `{ undeployed: true, request: <the JSON body> }`
 * A body that is not JSON never crashes the server: /jobs without a `callbackUrl` is a 400.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

type Json = (res: ServerResponse, status: number, body: unknown) => void;

/** Deploys in flight, per run. */
const deploying = new Map<string, number>();

export function handleDemoOps(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: string,
  json: Json,
): boolean {
  if (req.method !== "POST") return false;
  if (url.pathname === "/jobs") {
    // The callback tool's body (src/tools/callback.ts): { runId, stepId, token, callbackUrl, input: params.body }.
    const request = asObject(parseJson(body));
    const callbackUrl = typeof request.callbackUrl === "string" ? request.callbackUrl : undefined;
    if (!callbackUrl) {
      json(res, 400, { error: "expected a JSON body with a callbackUrl" });
      return true;
    }
    const jobId = `job-${Math.random().toString(36).slice(2, 10)}`;
    json(res, 202, { jobId, accepted: true });
    const delayMs = Math.max(0, Number(url.searchParams.get("delayMs") ?? 300) || 0);
    const input = asObject(request.input);
    const output = {
      jobId,
      status: "succeeded",
      artifact: `${String(input.service ?? "app")}-${String(input.version ?? "0")}.tar.gz`,
    };
    setTimeout(() => {
      fetch(callbackUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ output }),
      })
        .then((r) => {
          if (!r.ok) console.error(`demo job ${jobId}: callback answered ${r.status}`);
          return r.body?.cancel();
        })
        .catch((err: unknown) =>
          console.error(`demo job ${jobId}: callback failed: ${String(err)}`),
        );
    }, delayMs);
    return true;
  }
  const deploy = /^\/deploy\/([^/]+)$/.exec(url.pathname);
  if (deploy) {
    const target = safeDecode(deploy[1]!);
    // Deploys of one run (the Idempotency-Key's run id) in flight at once, this one included.
    const run = String(req.headers["idempotency-key"] ?? "").split(":")[0]!;
    const inFlight = (deploying.get(run) ?? 0) + 1;
    deploying.set(run, inFlight);
    const delayMs = Math.max(0, Number(url.searchParams.get("delayMs") ?? 250) || 0);
    setTimeout(() => {
      const left = deploying.get(run)! - 1;
      if (left === 0) deploying.delete(run);
      else deploying.set(run, left);
      if (target.includes("fail")) json(res, 500, { target, error: "deployment failed" });
      else json(res, 200, { target, deployed: true, concurrent: inFlight });
    }, delayMs);
    return true;
  }
  if (url.pathname === "/undeploy") {
    json(res, 200, { undeployed: true, request: parseJson(body) ?? null });
    return true;
  }
  return false;
}

/** The body as JSON, or undefined when it is empty or not JSON (a bad request must not crash the server). */
function parseJson(body: string): unknown {
  try {
    return body === "" ? undefined : (JSON.parse(body) as unknown);
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
