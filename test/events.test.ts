/**
 * The run's event log (SPEC 6): `GET /v1/runs/:id/events` as JSON pages (`after`, `limit`,
 * `next`) and as an SSE stream (`id:` = seq, `Last-Event-ID`, closes once the run is final
 * and every event was sent).
 */
import { describe, expect, it } from "vitest";
import { api, execute, status, submit } from "./helpers";
import { advanceToAlarm, drive, fireAlarm } from "./helpers";
import { unique, upstreamUrl } from "./helpers";

interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Parses complete SSE messages (each ends with a blank line); comments are ignored. */
function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === "") continue;
    const e: SseEvent = { id: undefined, event: undefined, data: "" };
    let fields = 0;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      fields++;
      if (name === "id") e.id = value;
      else if (name === "event") e.event = value;
      else if (name === "data") e.data = e.data === "" ? value : `${e.data}\n${value}`;
    }
    if (fields > 0) out.push(e);
  }
  return out;
}

/** The complete messages at the start of a partial stream text (an unterminated tail is dropped). */
function completeMessages(text: string): SseEvent[] {
  const end = text.lastIndexOf("\n\n");
  return end === -1 ? [] : parseSse(text.slice(0, end + 2));
}

function sse(runId: string, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return api(`/v1/runs/${runId}/events${query}`, {
    headers: { accept: "text/event-stream", ...headers },
  });
}

/** Reads a stream until `enough` holds for its complete messages; the text read so far. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  text: string,
  enough: (messages: SseEvent[]) => boolean,
  what: string,
): Promise<string> {
  const decoder = new TextDecoder();
  while (!enough(completeMessages(text))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream closed before ${what}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

/** Reads a stream to its end (resolves only if the server closes it). */
async function readToEnd(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  text: string,
): Promise<string> {
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

async function allEvents(runId: string): Promise<any[]> {
  const res = await api(`/v1/runs/${runId}/events?limit=1000`);
  expect(res.status).toBe(200);
  const page = (await res.json()) as any;
  expect(page.next).toBeNull();
  return page.events;
}

function plan() {
  return {
    name: unique("events"),
    steps: [
      { id: "a", tool: "pass", params: { value: 1 } },
      { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
      { id: "c", tool: "pass", params: { value: 3 } },
    ],
  };
}

/**
 * An `http` step `s` whose upstream answers 500 twice: attempt 1 schedules a retry (a minute
 * away), attempt 2 is the last and fails the step.
 * Returns the run and the step's status entry while it waited for the retry.
 */
async function retriedThenFailedRun(): Promise<{ runId: string; retrying: any }> {
  const { res, body } = await submit({
    name: unique("events-fail"),
    steps: [
      {
        id: "s",
        tool: "http",
        params: { url: `${upstreamUrl}/script/${unique("events-fail")}?plan=500` },
        retry: { maxRetries: 1, baseDelayMs: 60_000, jitter: "none" },
      },
    ],
  });
  expect(res.status).toBe(202);
  const runId = body.runId as string;
  await fireAlarm(runId);
  const retrying = (await status(runId)).steps[0];
  expect(retrying.status).toBe("retrying");
  await advanceToAlarm(runId);
  expect((await drive(runId)).status).toBe("failed");
  return { runId, retrying };
}

async function finishedRun(): Promise<string> {
  const s = await execute(plan());
  expect(s.status).toBe("completed");
  return s.runId;
}

describe("GET /v1/runs/:id/events", () => {
  it("lists the run's lifecycle in order: run_started ... run_finished", async () => {
    const events = await allEvents(await finishedRun());
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("run_started");
    expect(types[1]).toBe("iteration_started");
    expect(types.at(-2)).toBe("iteration_finished");
    expect(types.at(-1)).toBe("run_finished");
    expect(events.at(-1).data).toEqual({ status: "completed" });
    for (const id of ["a", "b", "c"]) {
      const started = events.findIndex((e) => e.type === "step_started" && e.stepId === id);
      const succeeded = events.findIndex((e) => e.type === "step_succeeded" && e.stepId === id);
      expect(started).toBeGreaterThan(1);
      expect(succeeded).toBeGreaterThan(started);
      expect(succeeded).toBeLessThan(events.length - 2);
    }
    // b reads a's output: a succeeded before b started
    const aDone = events.findIndex((e) => e.type === "step_succeeded" && e.stepId === "a");
    const bStart = events.findIndex((e) => e.type === "step_started" && e.stepId === "b");
    expect(aDone).toBeLessThan(bStart);
  });

  it("gives every event a strictly increasing seq and an ISO time", async () => {
    const events = await allEvents(await finishedRun());
    for (let i = 1; i < events.length; i++)
      expect(events[i].seq).toBeGreaterThan(events[i - 1].seq);
    for (const e of events) {
      expect(typeof e.seq).toBe("number");
      expect(new Date(e.at).toISOString()).toBe(e.at);
    }
  });

  it("puts stepId and attempt on step events, and neither on run events", async () => {
    const events = await allEvents(await finishedRun());
    const stepEvents = events.filter((e) => e.type.startsWith("step_"));
    expect(stepEvents).toHaveLength(6);
    for (const e of stepEvents) {
      expect(["a", "b", "c"]).toContain(e.stepId);
      expect(e.attempt).toBe(1);
    }
    for (const e of events.filter(
      (e) => e.type.startsWith("run_") || e.type.startsWith("iteration_"),
    )) {
      expect(e.stepId).toBeUndefined();
      expect(e.attempt).toBeUndefined();
    }
  });

  it("a retried then failed step: step_started, step_retry_scheduled, step_started, step_failed, with stepId and attempt", async () => {
    const { runId } = await retriedThenFailedRun();
    const stepEvents = (await allEvents(runId)).filter((e) => e.type.startsWith("step_"));
    expect(stepEvents.map((e) => [e.type, e.stepId, e.attempt])).toEqual([
      ["step_started", "s", 1],
      ["step_retry_scheduled", "s", 1],
      ["step_started", "s", 2],
      ["step_failed", "s", 2],
    ]);
  });

  it("step_retry_scheduled carries the error's category, status and message, and nextAttemptAt", async () => {
    const { runId, retrying } = await retriedThenFailedRun();
    const scheduled = (await allEvents(runId)).find((e) => e.type === "step_retry_scheduled");
    expect(scheduled.data).toEqual({
      category: "server_error",
      status: 500,
      message: expect.stringMatching(/^HTTP 500/),
      nextAttemptAt: retrying.nextAttemptAt,
    });
    // jitter "none": the retry is due exactly baseDelayMs after the failed attempt was recorded
    expect(Date.parse(scheduled.data.nextAttemptAt) - Date.parse(scheduled.at)).toBe(60_000);
  });

  it("step_failed carries the last attempt's error, the same as the step's status entry", async () => {
    const { runId } = await retriedThenFailedRun();
    const failed = (await allEvents(runId)).find((e) => e.type === "step_failed");
    expect(failed.data).toEqual({
      category: "server_error",
      status: 500,
      message: expect.stringMatching(/^HTTP 500/),
    });
    expect(failed.data).toEqual((await status(runId)).steps[0].error);
  });

  it("pages with limit and after=next over the whole log, without gaps or duplicates", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const walked: any[] = [];
    let after: number | null = 0;
    let pages = 0;
    while (after !== null) {
      const res = await api(`/v1/runs/${runId}/events?limit=2&after=${after}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as any;
      expect(page.events.length).toBeLessThanOrEqual(2);
      walked.push(...page.events);
      if (page.next !== null) expect(page.next).toBe(page.events.at(-1).seq);
      after = page.next;
      if (++pages > 100) throw new Error("paging does not end");
    }
    expect(pages).toBe(Math.ceil(full.length / 2));
    expect(walked).toEqual(full);
  });

  it("answers an empty page with next: null after the last event", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const page = (await (
      await api(`/v1/runs/${runId}/events?after=${full.at(-1).seq}`)
    ).json()) as any;
    expect(page.events).toEqual([]);
    expect(page.next).toBeNull();
  });

  it("rejects limit=0 with 400 and the issue's path", async () => {
    const runId = await finishedRun();
    const res = await api(`/v1/runs/${runId}/events?limit=0`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.issues.map((i: any) => i.path)).toContain("query.limit");
  });

  it.each(["abc", "", "1e3"])("rejects after=%s with 400", async (after) => {
    const runId = await finishedRun();
    const res = await api(`/v1/runs/${runId}/events?after=${after}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.issues.map((i: any) => i.path)).toContain("query.after");
  });

  it("is 404 for an unknown run", async () => {
    const res = await api(`/v1/runs/run_${"0".repeat(32)}/events`);
    expect(res.status).toBe(404);
  });
});

describe("GET /v1/runs/:id/events as SSE", () => {
  it("streams every event of a finished run with id = seq, and closes after run_finished", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const res = await sse(runId);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const messages = parseSse(await res.text()); // resolves only if the server closes the stream
    expect(messages.map((m) => Number(m.id))).toEqual(full.map((e) => e.seq));
    expect(messages.map((m) => m.event)).toEqual(full.map((e) => e.type));
    expect(messages.map((m) => JSON.parse(m.data))).toEqual(full);
    expect(messages.at(-1)!.event).toBe("run_finished");
  });

  it("an Accept that refuses the stream (q=0) gets the JSON page; one listing it among others gets the stream", async () => {
    const runId = await finishedRun();
    const refused = await sse(runId, { accept: "application/json, text/event-stream;q=0" });
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await refused.json()) as any).events.length).toBeGreaterThan(0);
    const listed = await sse(runId, { accept: "application/json;q=0.9, text/event-stream;q=0.5" });
    expect(listed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await listed.body?.cancel();
  });

  it("resumes after Last-Event-ID without repeating events", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const n = full[3].seq;
    const messages = parseSse(await (await sse(runId, { "last-event-id": String(n) })).text());
    expect(messages.map((m) => Number(m.id))).toEqual(full.slice(4).map((e) => e.seq));
  });

  it("a dropped connection resumed with Last-Event-ID yields the full log exactly once, in order", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);

    const first = await sse(runId);
    const reader = first.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (completeMessages(text).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    // the connection dropped after three messages; whatever else was buffered is lost
    const received = completeMessages(text).slice(0, 3);
    expect(received).toHaveLength(3);

    const lastId = received.at(-1)!.id!;
    const rest = parseSse(await (await sse(runId, { "last-event-id": lastId })).text());
    const union = [...received, ...rest].map((m) => JSON.parse(m.data));
    expect(union).toEqual(full);
  });

  it("answers 204 once a final run has nothing left to send, so an EventSource stops reconnecting", async () => {
    const runId = await finishedRun();
    const last = (await allEvents(runId)).at(-1).seq;
    for (const res of [
      await sse(runId, { "last-event-id": String(last) }),
      await sse(runId, {}, `?after=${last}`),
    ]) {
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
    }
    // One event short of the end, the stream still carries it.
    const rest = parseSse(await (await sse(runId, { "last-event-id": String(last - 1) })).text());
    expect(rest.map((m) => Number(m.id))).toEqual([last]);
  });

  it("takes ?after= when there is no Last-Event-ID", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const messages = parseSse(await (await sse(runId, {}, `?after=${full[1].seq}`)).text());
    expect(messages.map((m) => Number(m.id))).toEqual(full.slice(2).map((e) => e.seq));
  });

  it("an empty Last-Event-ID leaves ?after= in charge; one that names no seq is a 400", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const empty = parseSse(
      await (await sse(runId, { "last-event-id": "" }, `?after=${full[1].seq}`)).text(),
    );
    expect(empty.map((m) => Number(m.id))).toEqual(full.slice(2).map((e) => e.seq));
    for (const bad of ["abc", "-1", "1.5"]) {
      const res = await sse(runId, { "last-event-id": bad });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.issues[0].path).toBe("header.Last-Event-ID");
    }
  });

  it("an unknown query parameter is a 400 naming it", async () => {
    const runId = await finishedRun();
    const res = await api(`/v1/runs/${runId}/events?afterr=3`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.issues[0].path).toBe("query.afterr");
  });

  it("streams a live run: events that happen while connected arrive, then the stream closes", async () => {
    const { body } = await submit({
      ...plan(),
      config: { mode: { type: "bounded", iterations: 1 } },
    });
    const runId = body.runId as string;
    expect((await drive(runId)).status).toBe("paused");

    const res = await sse(runId);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!completeMessages(text).some((m) => m.event === "run_paused")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream closed on a paused run");
      text += decoder.decode(value, { stream: true });
    }

    const resumed = await api(`/v1/runs/${runId}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"iterations":5}',
    });
    expect(resumed.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");

    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const messages = parseSse(text);
    expect(messages.map((m) => JSON.parse(m.data))).toEqual(await allEvents(runId));
    expect(messages.at(-1)!.event).toBe("run_finished");
  });

  it("a dropped connection to a live run, resumed with Last-Event-ID, continues without gaps or duplicates and closes after the run finishes", async () => {
    // `s` fails once and waits a minute for its retry: the run stays live until the test makes the retry due.
    const { res, body } = await submit({
      name: unique("events-live"),
      steps: [
        { id: "a", tool: "pass", params: { value: 1 } },
        {
          id: "s",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${unique("events-live")}?plan=500,200` },
          retry: { maxRetries: 1, baseDelayMs: 60_000, jitter: "none" },
        },
      ],
    });
    expect(res.status).toBe(202);
    const runId = body.runId as string;
    await fireAlarm(runId);
    expect((await status(runId)).status).toBe("running");

    const first = (await sse(runId)).body!.getReader();
    const firstText = await readUntil(first, "", (m) => m.length >= 2, "two messages");
    await first.cancel();
    const received = completeMessages(firstText).slice(0, 2);

    // Reconnected while the run is still live: the rest of the log so far arrives, and the stream stays open.
    const second = (await sse(runId, { "last-event-id": received[1]!.id! })).body!.getReader();
    let text = await readUntil(
      second,
      "",
      (m) => m.some((e) => e.event === "step_retry_scheduled"),
      "the retry was scheduled",
    );
    expect((await status(runId)).status).toBe("running");

    await advanceToAlarm(runId);
    expect((await drive(runId)).status).toBe("completed");
    text = await readToEnd(second, text);

    const union = [...received, ...parseSse(text)];
    expect(union.map((m) => JSON.parse(m.data))).toEqual(await allEvents(runId));
    expect(union.at(-1)!.event).toBe("run_finished");
  });

  it("a redriven run's stream does not close at the first execution's run_finished, but after the final one", async () => {
    const { res, body } = await submit({
      name: unique("events-redrive"),
      steps: [
        { id: "ok", tool: "pass", params: { value: 1 } },
        {
          id: "flaky",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${unique("events-redrive")}?plan=500,200` },
          retry: { maxRetries: 0 },
        },
      ],
    });
    expect(res.status).toBe(202);
    const runId = body.runId as string;
    expect((await drive(runId)).status).toBe("partial");
    expect((await api(`/v1/runs/${runId}/retry`, { method: "POST" })).status).toBe(200);

    const reader = (await sse(runId)).body!.getReader();
    let text = await readUntil(
      reader,
      "",
      (m) => m.some((e) => e.event === "run_finished"),
      "the first run_finished",
    );
    expect((await drive(runId)).status).toBe("completed");
    text = await readToEnd(reader, text);

    const messages = parseSse(text);
    expect(messages.map((m) => JSON.parse(m.data))).toEqual(await allEvents(runId));
    const finished = messages
      .filter((m) => m.event === "run_finished")
      .map((m) => JSON.parse(m.data).data.status);
    expect(finished).toEqual(["partial", "completed"]);
    expect(messages.at(-1)!.event).toBe("run_finished");
  });
});

describe("SSE of a run that rolls back", () => {
  it("stays open after the run's end while a compensation is pending, and ends with its events", async () => {
    const key = unique("sse-rollback");
    const { res, body } = await submit({
      config: { rollback: true, retry: { maxRetries: 2, baseDelayMs: 1000, jitter: "none" } },
      steps: [
        {
          id: "a",
          tool: "pass",
          params: { value: 1 },
          compensate: {
            tool: "http",
            params: { url: `${upstreamUrl}/script/${key}?plan=503,200` },
          },
        },
        { id: "b", tool: "unknown_endpoint", dependsOn: ["a"], onFailure: "fail_run" },
      ],
    });
    expect(res.status).toBe(202);
    const runId = body.runId;
    // The run fails; its compensation gets a 503 and waits for its retry (1 s later).
    expect((await drive(runId)).status).toBe("failed");
    expect((await status(runId)).rollback.steps[0].status).toBe("retrying");
    const stream = await sse(runId);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = await readUntil(
      reader,
      "",
      (m) => m.some((e) => e.event === "run_finished"),
      "run_finished",
    );
    // The compensation's retry falls due: the stream then carries its end, and closes.
    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);
    text = await readToEnd(reader, text);
    const types = parseSse(text).map((e) => e.event);
    expect(types.slice(-1)).toEqual(["compensation_finished"]);
    expect((await status(runId)).rollback.state).toBe("completed");
  });
});
