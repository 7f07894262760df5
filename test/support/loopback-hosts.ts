/**
 * Host names for tests: `http://<label>.upstream.test/<path>` reaches the loopback upstream, so
 * a test can call it under a host of its own. Flow control keys destinations by host (SPEC 10):
 * one test's 429 then pauses its own host, not the upstream every other test calls. Installed
 * over the global `fetch` that the tools call, when the test Worker loads.
 */
import { env } from "cloudflare:workers";

export const TEST_HOST_SUFFIX = ".upstream.test";

/**
 * A host whose label starts with this loses its first call to each URL: the promise never
 * settles, whatever its signal says, as when workerd drops a call an object started under a
 * request that was cancelled (its timeout with it). Later calls reach the upstream.
 */
export const LOST_CALL_PREFIX = "lost-";

const fetchOf = globalThis.fetch;
const lostOnce = new Set<string>();

globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  if (!url.hostname.endsWith(TEST_HOST_SUFFIX)) return fetchOf(request);
  if (url.hostname.startsWith(LOST_CALL_PREFIX) && !lostOnce.has(url.href)) {
    lostOnce.add(url.href);
    return new Promise<Response>(() => {});
  }
  const upstream = new URL(env.UPSTREAM_URL);
  url.protocol = upstream.protocol;
  url.host = upstream.host;
  return fetchOf(new Request(url, request));
};
