/**
 * The few named errors of edgestep. Each carries a stable `code` (what API clients
 * switch on), whether it is `retryable`, and an optional `cause`. They are mapped to
 * HTTP once, in `app.onError` (src/api/app.ts).
 */

export interface Issue {
  /** Dotted path into the submitted document, e.g. `steps.2.dependsOn.0`. */
  path: string;
  message: string;
}

export abstract class EdgestepError extends Error {
  abstract readonly code: string;
  abstract readonly status: 400 | 401 | 404 | 409 | 413 | 429 | 500 | 503;
  readonly retryable: boolean = false;
  /** When set, how long to wait before retrying: it becomes the `Retry-After` header. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The plan (or a request body) broke a rule; `issues` says where. */
export class InvalidPlanError extends EdgestepError {
  readonly status = 400;
  constructor(
    readonly issues: Issue[],
    readonly code: "invalid_plan" | "egress_denied" | "invalid_request" = "invalid_plan",
    message = summarize(issues),
  ) {
    super(message);
  }
}

export class PayloadTooLargeError extends EdgestepError {
  readonly code = "payload_too_large";
  readonly status = 413;
}

export class NotFoundError extends EdgestepError {
  readonly code = "not_found";
  readonly status = 404;
}

/** The request is well-formed but the run is in a state that does not allow it. */
export class ConflictError extends EdgestepError {
  readonly code = "conflict";
  readonly status = 409;
}

/** Too many requests: retry after `retryAfterSeconds`. */
export class RateLimitedError extends EdgestepError {
  readonly code = "rate_limited";
  readonly status = 429;
  constructor(
    message: string,
    override readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** Something the request needs cannot be reached for now (the caller's run index, a run's object that restarted): retry. */
export class UnavailableError extends EdgestepError {
  readonly code = "unavailable";
  readonly status = 503;
  override readonly retryable = true;
  override readonly retryAfterSeconds = 1;
}

/** A variable of the deployment (DESTINATIONS, TOOLS, MAX_STEPS_PER_PLAN, ...) is invalid: its operator must fix it. */
export class ConfigurationError extends EdgestepError {
  readonly code = "misconfigured";
  readonly status = 500;
}

export class UnauthorizedError extends EdgestepError {
  readonly code = "unauthorized";
  readonly status = 401;
}

/**
 * The runtime's own error from a call into a Durable Object that a later try gets past, as a
 * named one: the object restarted while it answered (`durableObjectReset`: e.g. its watchdog
 * restarted it for a lost call), it is overloaded, or the platform could not reach it
 * (`retryable`, not thrown by the object's code, which sets `remote`). Anything else is not the
 * runtime's to excuse.
 */
export function unavailableObject(err: unknown): UnavailableError | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { durableObjectReset, overloaded, retryable, remote } = err as Record<string, unknown>;
  const why =
    durableObjectReset === true
      ? "restarted before it answered: send the request again"
      : overloaded === true
        ? "is overloaded: retry shortly"
        : retryable === true && remote !== true
          ? "could not be reached: send the request again"
          : undefined;
  if (why === undefined) return undefined;
  return new UnavailableError(`the Durable Object serving this request ${why}`, { cause: err });
}

function summarize(issues: Issue[]): string {
  const first = issues[0];
  if (!first) return "invalid plan";
  const where = first.path === "" ? "" : `${first.path}: `;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return `${where}${first.message}${more}`;
}
