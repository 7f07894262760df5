/** A JSON client for the Worker booted by an e2e test: requests, and polling a run's status. */
import { expect } from "vitest";

const FINAL = new Set(["completed", "partial", "failed", "cancelled"]);

/** `baseUrl` is read at call time: the Worker boots in `beforeAll`. */
export function e2eClient(baseUrl: () => string) {
  const url = (path: string) => (path.startsWith("http") ? path : `${baseUrl()}${path}`);

  async function post(path: string, body: unknown): Promise<Response> {
    return fetch(url(path), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  async function getJson(path: string): Promise<any> {
    const res = await fetch(url(path));
    expect(res.status).toBe(200);
    return res.json();
  }

  /**
   * Polls a run's status (`statusPath`: a path or the 202's statusUrl) until `done(status)`
   * holds, as real alarms drive the run. Fails at the deadline, or at once when the run ended
   * without it, unless `afterEnd` (rollback runs after the end).
   */
  async function waitFor(
    statusPath: string,
    what: string,
    done: (s: any) => boolean,
    afterEnd = false,
    timeoutMs = 15_000,
  ): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await getJson(statusPath);
      if (done(status)) return status;
      if (FINAL.has(status.status) && !afterEnd) {
        throw new Error(
          `waiting for ${what}, but the run ended ${status.status}: ${JSON.stringify(status)}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`no ${what} after ${timeoutMs} ms: ${JSON.stringify(status)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Polls until the run is final. */
  const waitForEnd = (statusPath: string, timeoutMs?: number) =>
    waitFor(statusPath, "the run's end", (s) => FINAL.has(s.status), true, timeoutMs);

  return { post, getJson, waitFor, waitForEnd };
}
