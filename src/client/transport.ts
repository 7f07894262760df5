/**
 * HTTP for the client: plain `fetch` (Node 22, browsers, Workers), the bearer key, JSON in and
 * out, and every failure turned into an EdgestepApiError. Aborts (an AbortSignal) pass through
 * as they are.
 */
import { EdgestepApiError, errorFromResponse, jsonBody } from "./errors.ts";

export interface ClientOptions {
  /** The Worker's base URL. Default: http://127.0.0.1:8787 (`npm start`). */
  url?: string;
  /** An API key (sent as `Authorization: Bearer <key>`); needed when the Worker sets API_KEYS. */
  apiKey?: string;
  /** A fetch to use instead of the global one (e.g. a service binding's `fetch` in a Worker). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * The longest to wait for an answer to begin, in ms (a long poll's `wait` is added): a server
   * that takes a connection but never answers is then a `network_error` (retryable) rather
   * than a wait of minutes. Default: none (the platform's own limits).
   */
  answerTimeoutMs?: number;
}

export type Query = Record<string, string | number | readonly string[] | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

export const DEFAULT_URL = "http://127.0.0.1:8787";

export class Transport {
  readonly baseUrl: string;
  private readonly fetcher: (request: Request) => Promise<Response>;
  private readonly headers: Record<string, string>;
  private readonly answerTimeoutMs: number | undefined;

  constructor(options: ClientOptions = {}) {
    this.answerTimeoutMs = options.answerTimeoutMs;
    const base = options.url ?? DEFAULT_URL;
    this.baseUrl = base.endsWith("/") ? base : `${base}/`;
    // Bound: a Workers runtime refuses `fetch` called as another object's method.
    this.fetcher = options.fetch ?? ((request) => globalThis.fetch(request));
    this.headers = {
      ...options.headers,
      ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` }),
    };
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(path.replace(/^\//, ""), this.baseUrl);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value])
        url.searchParams.append(name, String(v));
    }
    return url;
  }

  /** The raw answer, whatever its status; throws only when there was none. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = new Headers({
      accept: "application/json",
      ...this.headers,
      ...options.headers,
    });
    const hasBody = options.body !== undefined;
    if (hasBody && !headers.has("content-type")) headers.set("content-type", "application/json");
    const url = this.url(path, options.query);
    const timeout = this.answerTimeout(options.query);
    const signals = [options.signal, timeout?.signal].filter((s) => s !== undefined);
    const request = new Request(url, {
      method,
      headers,
      ...(hasBody && { body: JSON.stringify(options.body) }),
      ...(signals.length > 0 && { signal: AbortSignal.any(signals) }),
    });
    try {
      return await this.fetcher(request);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const why = timeout?.signal.aborted
        ? `no answer within ${timeout.ms} ms`
        : err instanceof Error
          ? err.message
          : String(err);
      throw new EdgestepApiError(
        { code: "network_error", status: 0, message: `cannot reach ${url.origin}: ${why}` },
        { cause: err },
      );
    } finally {
      timeout?.clear();
    }
  }

  /** A signal that aborts once the answer is `answerTimeoutMs` (plus a long poll's wait) late. */
  private answerTimeout(query: Query = {}) {
    if (this.answerTimeoutMs === undefined) return undefined;
    const ms = this.answerTimeoutMs + (typeof query.wait === "number" ? query.wait : 0);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error("no answer")), ms);
    return { ms, signal: controller.signal, clear: () => clearTimeout(timer) };
  }

  /** The answer's JSON (undefined for a 204); a status outside 2xx is an EdgestepApiError. */
  async json<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ status: number; body: T; response: Response }> {
    const response = await this.send(method, path, options);
    if (!response.ok) throw await errorFromResponse(response);
    if (response.status === 204) return { status: 204, body: undefined as T, response };
    return { status: response.status, body: await jsonBody<T>(response), response };
  }
}
