/**
 * A run's events as an async iterator over the SSE stream (`GET /v1/runs/:runId/events` with
 * `Accept: text/event-stream`). When the connection drops it reconnects with `Last-Event-ID`
 * (no gap, no repeat), as an EventSource would, and it ends only when the Worker says nothing
 * more will come: a 204 (the run is final and every event was sent).
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { EdgestepApiError, errorFromResponse } from "./errors.ts";
import { delay } from "./retry.ts";
import type { Transport } from "./transport.ts";
import type { RunEvent } from "./types.ts";

export interface EventStreamOptions {
  /** Start after this seq (default: from the first event). */
  after?: number;
  /** Reconnection attempts in a row without receiving an event before giving up. Default 5. */
  maxReconnects?: number;
  /** Wait before reconnecting, doubled after each failure in a row; the server's `retry:` replaces it. Default 1000. */
  reconnectDelayMs?: number;
  signal?: AbortSignal;
}

/** Whether another connection is worth trying after `err`. */
const transient = (err: unknown) => !(err instanceof EdgestepApiError) || err.retryable;

export async function* runEvents(
  transport: Transport,
  runId: string,
  options: EventStreamOptions = {},
): AsyncGenerator<RunEvent, void, undefined> {
  const { signal, maxReconnects = 5 } = options;
  let delayMs = options.reconnectDelayMs ?? 1000;
  let lastSeq = options.after;
  let failures = 0;
  for (;;) {
    let received = 0;
    try {
      const response = await transport.send("GET", `/v1/runs/${encodeURIComponent(runId)}/events`, {
        headers: {
          accept: "text/event-stream",
          ...(lastSeq !== undefined && { "last-event-id": String(lastSeq) }),
        },
        signal,
      });
      if (response.status === 204) return;
      if (!response.ok || !response.body) throw await errorFromResponse(response);
      const messages = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => (delayMs = ms) }));
      const reader = messages.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const event = JSON.parse(value.data) as RunEvent;
          lastSeq = event.seq;
          received++;
          failures = 0;
          yield event;
        }
      } finally {
        reader.cancel().catch(() => {});
      }
      // A clean end: the run is final and drained (the reconnection answers 204), unless it was
      // redriven meanwhile. One that brought nothing was cut while the run was quiet (a proxy
      // closing an idle stream): only a 204 ends the iteration, so reconnect, after a pause.
      if (received === 0) await delay(delayMs, signal);
    } catch (err) {
      if (signal?.aborted || !transient(err) || ++failures > maxReconnects) throw err;
      await delay(delayMs * 2 ** (failures - 1), signal);
    }
  }
}
