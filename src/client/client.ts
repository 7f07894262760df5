/**
 * The typed client of the edgestep API: one method per operation of the OpenAPI document
 * (named after its operationId), plus helpers: an idempotent submission that is safe to retry,
 * long polling until a run is final, the event stream as an async iterator, and listings as
 * async iterators over their pages.
 */
import { EdgestepApiError, errorFromResponse, jsonBody } from "./errors.ts";
import { runEvents, type EventStreamOptions } from "./events.ts";
import { delay, withRetries, type RetryOptions } from "./retry.ts";
import { Transport, type ClientOptions, type Query } from "./transport.ts";
import type * as T from "./types.ts";

const FINAL: ReadonlySet<string> = new Set(["completed", "partial", "failed", "cancelled"]);

/** True for `completed`, `partial`, `failed` and `cancelled`: nothing will change any more. */
export const isFinal = (status: T.RunState) => FINAL.has(status);

const run = (runId: string, rest = "") => `/v1/runs/${encodeURIComponent(runId)}${rest}`;
const list = (value: string | readonly string[] | undefined) =>
  value === undefined ? undefined : typeof value === "string" ? value : value.join(",");
const instant = (value: Date | string | undefined) =>
  value instanceof Date ? value.toISOString() : value;

export interface Signal {
  signal?: AbortSignal;
}

export interface WaitOptions extends Signal {
  /** Give up (an EdgestepApiError with code `timeout`) after this long. Default: never. */
  timeoutMs?: number;
  /** Called with each new version of the run's summary. */
  onUpdate?: (run: T.RunSummary) => void;
}

export class EdgestepClient {
  private readonly http: Transport;

  constructor(options: ClientOptions = {}) {
    this.http = new Transport(options);
  }

  /** The base URL requests go to. */
  get url(): string {
    return this.http.baseUrl;
  }

  async getHealth(options: Signal = {}): Promise<T.Health> {
    return (await this.http.json<T.Health>("GET", "/healthz", options)).body;
  }

  async validatePlan(plan: T.Plan, options: Signal = {}): Promise<T.ValidateResult> {
    return (
      await this.http.json<T.ValidateResult>("POST", "/v1/plans/validate", {
        body: plan,
        ...options,
      })
    ).body;
  }

  /**
   * `POST /v1/runs`. `created` is false when an `idempotencyKey` named a run that already
   * existed (the answer is then that run). See `submitRun` to retry safely.
   */
  async createRun(
    plan: T.Plan,
    options: Signal & { idempotencyKey?: string } = {},
  ): Promise<T.RunCreated & { created: boolean }> {
    const { idempotencyKey, signal } = options;
    const { status, body } = await this.http.json<T.RunCreated>("POST", "/v1/runs", {
      body: plan,
      signal,
      ...(idempotencyKey !== undefined && { headers: { "idempotency-key": idempotencyKey } }),
    });
    return { ...body, created: status === 202 };
  }

  /**
   * Submits a plan under an Idempotency-Key (a random UUID unless given) and retries network
   * failures, 429s and 5xx with that same key, so the plan runs once however often it is sent.
   */
  async submitRun(
    plan: T.Plan,
    options: RetryOptions & { idempotencyKey?: string } = {},
  ): Promise<T.RunCreated & { created: boolean; idempotencyKey: string }> {
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
    const created = await withRetries(
      () =>
        this.createRun(plan, { idempotencyKey, ...(options.signal && { signal: options.signal }) }),
      options,
    );
    return { ...created, idempotencyKey };
  }

  async getRun(runId: string, options: Signal = {}): Promise<T.RunStatus> {
    return (await this.http.json<T.RunStatus>("GET", run(runId), options)).body;
  }

  /** The status document without `steps` (SPEC 6.1), in a size independent of the plan's. */
  async getRunSummary(runId: string, options: Signal = {}): Promise<T.RunSummary> {
    return (
      await this.http.json<T.RunSummary>("GET", run(runId), {
        query: { view: "summary" },
        ...options,
      })
    ).body;
  }

  /** A conditional read (ETag / If-None-Match), or a long poll with `wait` (SPEC 6.1). */
  async pollRun(
    runId: string,
    options: T.PollRunOptions = {},
  ): Promise<T.PollResult<T.RunSummary>> {
    const { view, wait, etag, signal } = options;
    const response = await this.http.send("GET", run(runId), {
      query: { view, wait },
      headers: etag ? { "if-none-match": etag } : {},
      signal,
    });
    const next = response.headers.get("etag");
    if (response.status === 304) return { changed: false, etag: next ?? etag ?? null };
    if (!response.ok) throw await errorFromResponse(response);
    return { changed: true, etag: next, run: await jsonBody<T.RunSummary>(response) };
  }

  /**
   * Follows a run until it is final, by long polling its summary; answers its last summary.
   * With a Worker that does not long poll, it reads at most every 500 ms. A retryable failure
   * (no answer, 429, 5xx: a restart, a network blip) is asked again, backing off up to 5 s (or
   * as its Retry-After says), until `timeoutMs`: the run goes on without its watcher.
   */
  async waitForRun(runId: string, options: WaitOptions = {}): Promise<T.RunSummary> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    const { signal } = options;
    const retries = { retries: Infinity, baseDelayMs: 250, maxDelayMs: 5_000, deadline, signal };
    let etag: string | null = null;
    for (;;) {
      const asked = Date.now();
      const polled = await withRetries(() => {
        const wait = Math.max(1, Math.min(25_000, deadline - Date.now()));
        return this.pollRun(runId, { view: "summary", wait, etag, signal });
      }, retries);
      etag = polled.etag;
      if (polled.changed) {
        options.onUpdate?.(polled.run);
        if (isFinal(polled.run.status)) return polled.run;
      }
      if (Date.now() >= deadline) {
        throw new EdgestepApiError({
          code: "timeout",
          status: 0,
          message: `run ${runId} is not final after ${options.timeoutMs} ms`,
        });
      }
      const early = 500 - (Date.now() - asked);
      if (early > 0) await delay(early, options.signal);
    }
  }

  async listSteps(runId: string, options: T.ListStepsOptions & Signal = {}): Promise<T.StepsPage> {
    const query: Query = {
      status: list(options.status),
      after: options.after,
      limit: options.limit,
    };
    return (
      await this.http.json<T.StepsPage>("GET", run(runId, "/steps"), {
        query,
        signal: options.signal,
      })
    ).body;
  }

  async getStep(runId: string, stepId: string, options: Signal = {}): Promise<T.StepDetail> {
    const path = run(runId, `/steps/${encodeURIComponent(stepId)}`);
    return (await this.http.json<T.StepDetail>("GET", path, options)).body;
  }

  /** The plan the run executes, as a plan document (defaults filled in, no secrets). */
  async getRunPlan(runId: string, options: Signal = {}): Promise<T.RunPlan> {
    return (await this.http.json<T.RunPlan>("GET", run(runId, "/plan"), options)).body;
  }

  async getResults(runId: string, options: Signal = {}): Promise<T.StepResult[]> {
    return (await this.http.json<T.StepResult[]>("GET", run(runId, "/results"), options)).body;
  }

  /** One page of the event log as JSON; `next` is the `after` of the following page. */
  async listEvents(
    runId: string,
    options: T.ListEventsOptions & Signal = {},
  ): Promise<T.EventsPage> {
    const query: Query = { after: options.after, limit: options.limit };
    return (
      await this.http.json<T.EventsPage>("GET", run(runId, "/events"), {
        query,
        signal: options.signal,
      })
    ).body;
  }

  /**
   * The run's events, live (SSE), from the first one or after `options.after`. Reconnects with
   * Last-Event-ID when the connection drops; ends once the run is final and every event came.
   */
  events(
    runId: string,
    options: EventStreamOptions = {},
  ): AsyncGenerator<T.RunEvent, void, undefined> {
    return runEvents(this.http, runId, options);
  }

  async cancelRun(runId: string, options: Signal = {}): Promise<T.ControlResult> {
    return this.control(runId, "cancel", undefined, options);
  }

  async resumeRun(
    runId: string,
    body: T.ResumeRequest = {},
    options: Signal = {},
  ): Promise<T.ControlResult> {
    return this.control(runId, "resume", body, options);
  }

  async retryRun(runId: string, options: Signal = {}): Promise<T.ControlResult> {
    return this.control(runId, "retry", undefined, options);
  }

  async approveRun(
    runId: string,
    body: T.ApproveRequest,
    options: Signal = {},
  ): Promise<T.ControlResult> {
    return this.control(runId, "approve", body, options);
  }

  /** `approveRun` with `approved: false`: cancels at the risk gate, fails an approval step. */
  async denyRun(
    runId: string,
    body: Omit<T.ApproveRequest, "approved" | "skipSteps"> = {},
    options: Signal = {},
  ): Promise<T.ControlResult> {
    return this.control(runId, "approve", { ...body, approved: false }, options);
  }

  /**
   * Answers a step's pending repair (SPEC 9.2, `replan.mode` human): `{ steps }` (the failed
   * step's new definition, same id, and any new steps) or `{ giveUp: true, reason }`; `stepId`
   * names the step when several wait. An invalid repair throws with its issues; the step keeps waiting.
   */
  async replanRun(
    runId: string,
    body: T.ReplanRequest,
    options: Signal = {},
  ): Promise<T.ControlResult> {
    return this.control(runId, "replan", body, options);
  }

  private async control(runId: string, action: string, body: unknown, options: Signal) {
    return (
      await this.http.json<T.ControlResult>("POST", run(runId, `/${action}`), { body, ...options })
    ).body;
  }

  /** Completes a `callback` step: `{ output }`, or `{ error: { message } }`. No API key needed. */
  async completeCallback(
    token: string,
    body: T.CallbackRequest,
    options: Signal = {},
  ): Promise<T.CallbackResult> {
    const path = `/v1/callbacks/${encodeURIComponent(token)}`;
    return (await this.http.json<T.CallbackResult>("POST", path, { body, ...options })).body;
  }

  /** One page of the caller's runs, newest first (SPEC 8.2). */
  async listRuns(options: T.ListRunsOptions & Signal = {}): Promise<T.RunList> {
    const query: Query = {
      status: list(options.status),
      name: options.name,
      tag: options.tag && Object.entries(options.tag).map(([k, v]) => `${k}:${v}`),
      createdAfter: instant(options.createdAfter),
      createdBefore: instant(options.createdBefore),
      limit: options.limit,
      cursor: options.cursor,
    };
    return (await this.http.json<T.RunList>("GET", "/v1/runs", { query, signal: options.signal }))
      .body;
  }

  /** Every matching run, page after page. */
  async *iterateRuns(options: T.ListRunsOptions & Signal = {}): AsyncGenerator<T.RunListEntry> {
    let cursor = options.cursor;
    do {
      const page = await this.listRuns({ ...options, ...(cursor !== undefined && { cursor }) });
      yield* page.runs;
      cursor = page.next ?? undefined;
    } while (cursor !== undefined);
  }

  async getStats(options: Signal = {}): Promise<T.Stats> {
    return (await this.http.json<T.Stats>("GET", "/v1/stats", options)).body;
  }

  /** Flow control per destination (SPEC 10): limits, calls in flight and waiting, pauses. */
  async listDestinations(options: Signal = {}): Promise<T.DestinationState[]> {
    return (await this.http.json<T.DestinationState[]>("GET", "/v1/destinations", options)).body;
  }

  /** Deletes a final run and everything it stored (SPEC 8.3); a run that is not final is a 409. */
  async deleteRun(runId: string, options: Signal = {}): Promise<void> {
    await this.http.json<undefined>("DELETE", run(runId), options);
  }
}
