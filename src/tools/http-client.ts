/**
 * Sends one HTTP attempt and turns the response into a ToolResult: timeout through an
 * AbortSignal, `Idempotency-Key` and `X-Edgestep-Attempt` headers, JSON or text `data`,
 * a bounded body, and the error categories of SPEC 5.2.
 */
import { jsonTextTooDeep } from "../engine/json-depth";
import { categorizeStatus, parseRetryAfter } from "../engine/retry";
import { toolFailure, type ToolCall, type ToolResult } from "./tool";

export type Fetcher = (request: Request) => Promise<Response>;

export interface HttpRequestSpec {
  url: string;
  method: string;
  headers?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** Header names dropped, besides Authorization and Cookie, when a redirect changes origin. */
  dropOnCrossOrigin?: string[];
  /**
   * Applied to an error response's body before it is cut into the failure message, so that
   * the cut cannot leave part of a secret the body echoed (registry tools redact theirs).
   */
  redactBody?: (text: string) => string;
}

/** Query values: arrays joined with ",", objects as JSON, null/undefined left out. */
export function appendQuery(url: URL, query: Record<string, unknown> | undefined): void {
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    url.searchParams.set(key, textValue(value));
  }
}

/** A value sent as text (a query value, a header's): arrays joined with ",", objects as JSON. */
export function textValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(textValue).join(",");
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}

/** Checks a URL against the egress allowlist: a message when it is denied, else null. */
export type UrlCheck = (url: string) => string | null;

/** Header names are HTTP tokens (RFC 9110). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * Header values: printable ASCII, space and tab. CR, LF or NUL would break the header line,
 * and other characters reach an upstream as bytes it may read otherwise (an echo of a secret
 * it read as Latin-1 would escape redaction), while workerd logs such a value in a warning.
 */
export const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
export const HEADER_VALUE_RULE =
  "an HTTP header value holds only printable ASCII characters, spaces and tabs (no CR, LF, NUL or non-ASCII)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/**
 * MAX_OUTPUT_BYTES bounds the output as stored (compact JSON, checked by the verdict); a body
 * is read up to this many times that, so a pretty-printed answer whose data fits is kept, and
 * one that could never fit is not read whole.
 */
const BODY_READ_MARGIN = 4;
/** Decodes whole bodies (not streaming), so one decoder serves every call. */
const utf8 = new TextDecoder();
const MAX_REDIRECTS = 5;

/** What one HTTP attempt sends, once its URL, query, headers and body are built. */
interface PreparedRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: string | undefined;
}

/** Builds the request of `spec`, or the failure that ends the attempt before anything is sent. */
function prepare(
  spec: HttpRequestSpec,
  call: ToolCall,
  checkUrl: UrlCheck,
): PreparedRequest | ToolResult {
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    return toolFailure("invalid_data", `"${spec.url}" is not a valid URL`);
  }
  appendQuery(url, spec.query);
  const denied = checkUrl(url.href);
  if (denied) return toolFailure("egress_denied", denied);
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    // Refused here, before workerd would log the value (a secret, perhaps) in a warning.
    if (!HEADER_VALUE.test(value))
      return toolFailure("invalid_data", `header "${name}": ${HEADER_VALUE_RULE}`);
  }
  let headers: Headers;
  try {
    headers = new Headers(spec.headers);
  } catch (err) {
    // A header built by a template at run time can still be malformed: a client mistake, not retried.
    return toolFailure("invalid_data", `invalid header: ${(err as Error).message}`);
  }
  headers.set("Idempotency-Key", call.idempotencyKey);
  headers.set("X-Edgestep-Attempt", String(call.attempt));
  let body: string | undefined;
  const sendsBody = spec.body !== undefined && spec.body !== null;
  if (sendsBody && !bodiless(spec.method)) {
    if (typeof spec.body === "string") body = spec.body;
    else {
      body = JSON.stringify(spec.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
  }
  return { url, method: spec.method, headers, body };
}

/** A method fetch sends no body with (GET, HEAD): validation refuses a body for one. */
export function bodiless(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/**
 * Sends the request; follows redirects itself (at most 5) so that every hop is checked
 * against ALLOWED_HOSTS, and credentials never follow a redirect to another origin.
 */
export async function sendHttp(
  spec: HttpRequestSpec,
  call: ToolCall,
  fetcher: Fetcher,
  checkUrl: UrlCheck,
): Promise<ToolResult> {
  const request = prepare(spec, call, checkUrl);
  if (!("url" in request)) return request;
  // A timer we clear (unlike AbortSignal.timeout) so no timeout outlives its attempt.
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException("timed out", "TimeoutError")),
    call.timeoutMs,
  );
  const signal = AbortSignal.any([timeout.signal, call.signal]);
  try {
    const followed = await follow(request, spec, call, fetcher, checkUrl, signal);
    if (!("response" in followed)) return followed;
    const { response, url } = followed;
    const readLimit = call.maxOutputBytes * BODY_READ_MARGIN;
    const read = await readBody(response, readLimit, signal);
    if (read === "too_large") {
      const message = `response body exceeds ${readLimit} bytes (${BODY_READ_MARGIN} × MAX_OUTPUT_BYTES), not read`;
      return toolFailure("output_too_large", message, { status: response.status });
    }
    const result = toResult(response, read, Date.now(), call.maxOutputDepth, spec.redactBody);
    if ("category" in result && url.origin !== request.url.origin)
      return { ...result, answeredBy: url.origin };
    return result;
  } catch (err) {
    if (!signal.aborted) return toolFailure("network", `request failed: ${(err as Error).message}`);
    return timeout.signal.aborted
      ? toolFailure("timeout", `no response within ${call.timeoutMs} ms`)
      : toolFailure("cancelled", "the run was cancelled");
  } finally {
    clearTimeout(timer);
  }
}

/** Fetches `request`, following redirects hop by hop: the final response and its URL, or why it stopped. */
async function follow(
  request: PreparedRequest,
  spec: HttpRequestSpec,
  call: ToolCall,
  fetcher: Fetcher,
  checkUrl: UrlCheck,
  signal: AbortSignal,
): Promise<{ response: Response; url: URL } | ToolResult> {
  let { url, method, body } = request;
  const { headers } = request;
  for (let hops = 0; ; hops++) {
    const response = await fetcher(
      new Request(url, { method, headers, body, signal, redirect: "manual" }),
    );
    const location = REDIRECT_STATUSES.has(response.status)
      ? response.headers.get("location")
      : null;
    if (location === null) return { response, url };
    await response.body?.cancel();
    if (hops === MAX_REDIRECTS)
      return toolFailure("invalid_data", `more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, url);
    const refused = checkUrl(next.href);
    if (refused) return toolFailure("egress_denied", `redirected to ${next.origin}: ${refused}`);
    const held = call.redirect?.(next.href);
    if (held) return held;
    if (next.origin !== url.origin) {
      headers.delete("authorization");
      headers.delete("proxy-authorization");
      headers.delete("cookie");
      for (const name of spec.dropOnCrossOrigin ?? []) headers.delete(name);
    }
    // 303, and 301/302 after a POST, continue as a GET without the body (as browsers do).
    const status = response.status;
    if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      headers.delete("content-type");
    }
    url = next;
  }
}

/** Reads at most `limit` bytes; an abort (timeout, cancel) stops even a body that never ends. */
async function readBody(
  response: Response,
  limit: number,
  signal: AbortSignal,
): Promise<string | "too_large"> {
  const declared = Number(response.headers.get("content-length"));
  if (declared > limit) {
    await response.body?.cancel();
    return "too_large";
  }
  if (!response.body) return "";
  // A declared length within the limit: the runtime reads exactly that much, natively.
  if (response.headers.has("content-length")) return response.text();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const stop = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return "too_large";
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return utf8.decode(bytes);
}

function toResult(
  response: Response,
  text: string,
  now: number,
  maxDepth: number,
  redactBody?: (text: string) => string,
): ToolResult {
  const status = response.status;
  const category = categorizeStatus(status);
  if (category !== null) {
    const honoursRetryAfter = status === 429 || status === 503;
    const retryAfterMs = honoursRetryAfter
      ? parseRetryAfter(response.headers.get("retry-after"), now)
      : undefined;
    const shown = redactBody ? redactBody(text) : text;
    const snippet = shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
    return toolFailure(category, `HTTP ${status}${snippet ? `: ${snippet}` : ""}`, {
      status,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
  const isJson = /\bjson\b/i.test(response.headers.get("content-type") ?? "");
  if (!isJson) return { ok: true, data: text, status };
  if (text.trim() === "") return { ok: true, data: null, status };
  // Before parsing: what follows (redaction, storage, every read) walks the value recursively.
  if (jsonTextTooDeep(text, maxDepth)) {
    return toolFailure(
      "invalid_data",
      `response is nested deeper than ${maxDepth} levels (MAX_OUTPUT_DEPTH)`,
      { status },
    );
  }
  try {
    return { ok: true, data: JSON.parse(text), status };
  } catch (err) {
    // V8's message quotes a cut excerpt of the body: left out when the body held something redacted.
    const detail = redactBody && redactBody(text) !== text ? "" : `: ${(err as Error).message}`;
    return toolFailure("invalid_data", `response is not valid JSON${detail}`, { status });
  }
}
