/**
 * `GET /v1/runs/:runId/events`: pages through the run's event log, or, with
 * `Accept: text/event-stream`, streams it live as SSE (`id:` = seq), resuming after
 * `Last-Event-ID`, and closing once the run is final (its rollback done) and every event was
 * sent. Webhook deliveries are not waited for: they go on beside the run, retries included,
 * and their events may follow the close (a page read has them). A stream opened on a final
 * run with nothing left to send is a 204.
 */
import type { Context } from "hono";
import { accepts } from "hono/accepts";
import { streamSSE } from "hono/streaming";
import type { EventRecord } from "../engine/records";
import { InvalidPlanError } from "../errors";
import { eventsQuerySchema } from "./schemas";
import type { AppEnv } from "./types";
import { parseQuery } from "./validate-input";

/** How long one read of the stream waits in the run's object for the next events. */
const WAIT_MS = 5_000;
const KEEPALIVE_MS = 15_000;

export function eventView(e: EventRecord) {
  return {
    seq: e.seq,
    type: e.type,
    at: new Date(e.at).toISOString(),
    ...(e.stepId !== null && { stepId: e.stepId }),
    ...(e.attempt !== null && { attempt: e.attempt }),
    ...(e.data !== null && { data: JSON.parse(e.data) as unknown }),
  };
}

type EventsStub = {
  events(
    owner: string,
    after: number,
    limit: number,
    waitMs?: number,
  ): Promise<{ events: EventRecord[]; dropped: number; finished: boolean } | null>;
};

/**
 * The `Last-Event-ID` a reconnecting stream sends: an event's seq, or null when absent or empty
 * (`?after=` then says where to start). Anything else is a 400: it names no event of ours.
 */
function lastEventId(header: string | undefined): number | null {
  if (header === undefined || header.trim() === "") return null;
  const seq = Number(header);
  if (/^\s*\d+\s*$/.test(header) && Number.isSafeInteger(seq)) return seq;
  throw new InvalidPlanError(
    [
      {
        path: "header.Last-Event-ID",
        message: `${JSON.stringify(header.slice(0, 40))} is not an event's seq (an integer, 0 or more)`,
      },
    ],
    "invalid_request",
  );
}

/** Whether the client takes the live stream: `text/event-stream` in Accept, not refused (`q=0`). */
function wantsStream(c: Context<AppEnv>): boolean {
  const STREAM = "text/event-stream";
  const chosen = accepts(c, {
    header: "Accept",
    supports: ["application/json", STREAM],
    default: "application/json",
    // Asked for at any quality above 0, whatever else is listed: what an SSE client sends.
    match: (list) => (list.some((a) => a.type.toLowerCase() === STREAM && a.q > 0) ? STREAM : ""),
  });
  return chosen === STREAM;
}

export async function eventsResponse(c: Context<AppEnv>, stub: EventsStub, onMissing: () => never) {
  const owner = c.get("owner");
  const query = parseQuery(c, eventsQuerySchema);
  if (!wantsStream(c)) {
    const page = (await stub.events(owner, query.after, query.limit + 1)) ?? onMissing();
    const more = page.events.length > query.limit;
    const events = page.events.slice(0, query.limit).map(eventView);
    const next = more ? events[events.length - 1]!.seq : null;
    return c.json({ events, next, dropped: page.dropped });
  }
  let after = lastEventId(c.req.header("last-event-id")) ?? query.after;
  const first = (await stub.events(owner, after, 500)) ?? onMissing();
  // Nothing will ever follow: 204 is what makes an EventSource stop reconnecting (WHATWG HTML
  // 9.2), where an empty 200 would have it come back every few seconds forever.
  if (first.finished && first.events.length === 0) return c.body(null, 204);
  return streamSSE(c, async (stream) => {
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
    });
    let page: Awaited<ReturnType<EventsStub["events"]>> = first;
    let quietSince = Date.now();
    while (!aborted && page) {
      for (const e of page.events) {
        // Seqs are consecutive: a jump means the oldest events were trimmed (MAX_EVENTS_PER_RUN).
        const dropped = e.seq - after - 1;
        if (dropped > 0) {
          const events = dropped === 1 ? "event" : "events";
          await stream.write(`: ${dropped} ${events} dropped (MAX_EVENTS_PER_RUN)\n\n`);
        }
        await stream.writeSSE({
          id: String(e.seq),
          event: e.type,
          data: JSON.stringify(eventView(e)),
        });
        after = e.seq;
      }
      // The stream ends once the run is final and its log is drained: a redriven run's earlier
      // run_finished does not end it.
      if (page.finished && page.events.length < 500) return;
      if (page.events.length > 0) quietSince = Date.now();
      else if (Date.now() - quietSince > KEEPALIVE_MS) {
        await stream.write(": keep-alive\n\n");
        quietSince = Date.now();
      }
      // The run's object holds the request until something is written (or the keep-alive is due).
      page = await stub.events(owner, after, 500, page.events.length < 500 ? WAIT_MS : 0);
    }
  });
}
