/**
 * The run's event log (SPEC 6): `GET /v1/runs/:id/events` as JSON pages (`after`, `limit`,
 * `next`) and as an SSE stream (`id:` = seq, `Last-Event-ID`, closes after run_finished).
 */
import { describe, expect, it } from "vitest";
import { api, drive, execute, submit, unique } from "./helpers";

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

  it("rejects a non-numeric after with 400", async () => {
    const runId = await finishedRun();
    const res = await api(`/v1/runs/${runId}/events?after=abc`);
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

  it("takes ?after= when there is no Last-Event-ID", async () => {
    const runId = await finishedRun();
    const full = await allEvents(runId);
    const messages = parseSse(await (await sse(runId, {}, `?after=${full[1].seq}`)).text());
    expect(messages.map((m) => Number(m.id))).toEqual(full.slice(2).map((e) => e.seq));
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
});
