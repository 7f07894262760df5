/** The one error the client throws for anything the API (or the way to it) refused. */
import type { Issue } from "./types.ts";

export class EdgestepApiError extends Error {
  override readonly name = "EdgestepApiError";
  /**
   * The API's error code (`invalid_plan`, `not_found`, `conflict`, `unauthorized`,
   * `rate_limited`, ...), `network_error` when the Worker could not be reached, or
   * `http_<status>` for an answer that is not edgestep's JSON error (a proxy's, say), or
   * `invalid_response` for a success that is not JSON.
   */
  readonly code: string;
  /** The HTTP status; 0 when there was no answer. */
  readonly status: number;
  /** Where the request was wrong (`steps.1.dependsOn.0`), for 400s. */
  readonly issues: Issue[];
  /** Seconds the API asked to wait (`Retry-After` of a 429 or 503), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    init: {
      code: string;
      status: number;
      message: string;
      issues?: Issue[];
      retryAfterSeconds?: number;
    },
    options?: { cause?: unknown },
  ) {
    super(init.message, options);
    this.code = init.code;
    this.status = init.status;
    this.issues = init.issues ?? [];
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /**
   * Worth sending again (with the same Idempotency-Key): no answer, 408, 429 or a 5xx, but not
   * `misconfigured` or `auth_not_configured` (the deployment stays so until its operator acts).
   */
  get retryable(): boolean {
    if (this.code === "misconfigured" || this.code === "auth_not_configured") return false;
    return this.status === 0 || this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/**
 * A 2xx answer's JSON body. One that is not JSON (a web page, another service at the URL) is an
 * `invalid_response` error naming what came back, not a bare SyntaxError.
 */
export async function jsonBody<T>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    const type = res.headers.get("content-type") ?? "no content-type";
    throw new EdgestepApiError({
      code: "invalid_response",
      status: res.status,
      message: `the answer (HTTP ${res.status}, ${type}) is not JSON: is this an edgestep Worker's URL? It began ${JSON.stringify(text.slice(0, 60))}`,
    });
  }
}

/** The error a non-2xx answer stands for; reads its JSON body when it has one. */
export async function errorFromResponse(res: Response): Promise<EdgestepApiError> {
  const retryAfterSeconds = secondsToWait(res.headers.get("retry-after"), Date.now());
  const text = await res.text().catch(() => "");
  let body: { error?: { code?: unknown; message?: unknown; issues?: unknown } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    return new EdgestepApiError({
      code: error.code,
      status: res.status,
      message: error.message,
      ...(Array.isArray(error.issues) && { issues: error.issues as Issue[] }),
      ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
    });
  }
  return new EdgestepApiError({
    code: `http_${res.status}`,
    status: res.status,
    message: `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
    ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
  });
}

/** `Retry-After` as seconds (it may be a number of seconds or an HTTP date); undefined when absent or unreadable. */
export function secondsToWait(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
