/**
 * Follows a run's event log over SSE (`GET /v1/runs/:id/events`, Accept: text/event-stream).
 * fetch() rather than EventSource, so the API key goes in the Authorization header (never
 * in the URL). When the stream drops or the server closes it before the run is final, it
 * reconnects with `Last-Event-ID`: no gap, no duplicate. A 404 (no such run) or a 401 stops it,
 * and so does a 204: the server's word that the run is final and every event was sent.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { authHeaders } from "../api";
import { apiKey, keyNeeded } from "../auth";
import type { RunEvent } from "../types";

export type Connection = "connecting" | "live" | "reconnecting" | "ended";

export interface FollowOptions {
  runId: string;
  onEvents(events: RunEvent[]): void;
  onConnection(state: Connection): void;
  /** Asked when the server closed the stream: true if the run is final (then stop). */
  isFinal(): Promise<boolean>;
}

export function followEvents(opts: FollowOptions): () => void {
  const abort = new AbortController();
  let lastId: string | null = null;
  let stopped = false;

  /**
   * Reads the stream until it ends: "gone" when there is nothing to follow, "final" when the
   * server said the run is over (a 204).
   */
  async function readOnce(): Promise<"gone" | "final" | void> {
    const opened = await openStream(opts.runId, lastId, abort.signal);
    if (opened === "gone" || opened === "final") return opened;
    opts.onConnection("live");
    await readInBatches(opened, (id) => (lastId = id), opts.onEvents);
  }

  void (async () => {
    let delay = 1000;
    opts.onConnection("connecting");
    while (!stopped) {
      try {
        const end = await readOnce();
        delay = 1000;
        if (stopped) return;
        // After a 204 the run is final whatever the page last read: isFinal still reads it
        // (so the status shown is the final one) but cannot keep the stream going.
        if (end === "gone" || (await opts.isFinal()) || end === "final") {
          opts.onConnection("ended");
          return;
        }
      } catch {
        if (stopped) return;
        delay = Math.min(delay * 2, 10_000);
      }
      opts.onConnection("reconnecting");
      await new Promise((r) => setTimeout(r, delay));
    }
  })();

  return () => {
    stopped = true;
    abort.abort();
  };
}

/** The run's event stream after `lastId`, or why there is none to read. */
async function openStream(
  runId: string,
  lastId: string | null,
  signal: AbortSignal,
): Promise<ReadableStream | "gone" | "final"> {
  const key = apiKey();
  const headers: Record<string, string> = { accept: "text/event-stream", ...authHeaders() };
  if (lastId !== null) headers["last-event-id"] = lastId;
  const res = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, {
    headers,
    signal,
    cache: "no-store",
  });
  if (res.status === 401) keyNeeded(key);
  // No such run (or it was deleted), or the key was refused (the page mounts again, and
  // follows again, once a key is given): asking again would get the same answer forever.
  if (res.status === 404 || res.status === 401) return "gone";
  // Final, nothing left to send (a webhook still retrying does not change that): asking
  // again would get the same answer.
  if (res.status === 204) return "final";
  if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
  return res.body;
}

/** Reads `body` to its end; events come in bursts (a replayed log, a fan-out): handed over together. */
async function readInBatches(
  body: ReadableStream,
  onId: (id: string) => void,
  onEvents: (events: RunEvent[]) => void,
): Promise<void> {
  const reader = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  let batch: RunEvent[] = [];
  let flush: ReturnType<typeof setTimeout> | null = null;
  const send = () => {
    flush = null;
    const events = batch;
    batch = [];
    if (events.length > 0) onEvents(events);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.id) onId(value.id);
      batch.push(JSON.parse(value.data) as RunEvent);
      flush ??= setTimeout(send, 30);
    }
  } finally {
    if (flush) clearTimeout(flush);
    send();
  }
}
