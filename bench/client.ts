/**
 * The bench's clients, as a user's program would be: edgestep's API (submit a plan, then poll
 * `GET /v1/runs/:id`, sleeping `pollMs` between an answer and the next request), the Workflows
 * Worker (create an instance, poll its status the same way), and the upstream's call log.
 *
 * Clocks: `performance.now()` for durations on the client; `Date.now()` (epoch ms, the same
 * machine's clock that the upstream and workerd read) where a client time meets theirs.
 */
import { performance } from "node:perf_hooks";
import type { BenchPlan } from "./plans.ts";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** An ISO-8601 time from the API, as epoch ms (NaN when absent). */
export const iso = (s: string | null | undefined): number => (s ? Date.parse(s) : NaN);

export const RUN_FINAL = new Set(["completed", "partial", "failed", "cancelled", "paused"]);

export interface RunDoc {
  runId: string;
  status: string;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  iterations: number;
  /** Absent from `?view=summary` (SPEC 6.1). */
  steps?: { id: string; status: string; error?: unknown }[];
}

export interface Submitted {
  id: string;
  /** performance.now() and Date.now() just before the request was sent. */
  t0: number;
  wall0: number;
  /** Request sent -> answer read. */
  acceptedMs: number;
}

export interface Followed<T> {
  doc: T;
  /** performance.now() and Date.now() when the first final document had been read. */
  seenAt: number;
  seenWall: number;
  polls: number;
  /** Each poll's latency (request sent -> body read), in order. */
  readMs: number[];
  /** Size of the last document read. */
  bytes: number;
}

interface Read<T> {
  doc: T;
  bytes: number;
  ms: number;
}

async function getJson<T>(url: string, headers?: Record<string, string>): Promise<Read<T>> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return { doc: JSON.parse(text) as T, bytes: Buffer.byteLength(text), ms };
}

async function postJson<T>(
  url: string,
  body: string,
  expect: number,
  headers: Record<string, string> = {},
): Promise<{ body: T; t0: number; wall0: number; acceptedMs: number }> {
  const wall0 = Date.now();
  const t0 = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  const acceptedMs = performance.now() - t0;
  if (res.status !== expect)
    throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return { body: JSON.parse(text) as T, t0, wall0, acceptedMs };
}

/** Reads until `final(doc)`, sleeping `pollMs` between an answer and the next request. */
async function follow<T>(
  read: () => Promise<Read<T>>,
  final: (doc: T) => boolean,
  pollMs: number,
  timeoutMs: number,
  what: string,
): Promise<Followed<T>> {
  const deadline = performance.now() + timeoutMs;
  const readMs: number[] = [];
  for (;;) {
    const r = await read();
    const seenAt = performance.now();
    const seenWall = Date.now();
    readMs.push(r.ms);
    if (final(r.doc))
      return { doc: r.doc, seenAt, seenWall, polls: readMs.length, readMs, bytes: r.bytes };
    if (seenAt > deadline) throw new Error(`${what} not finished after ${timeoutMs} ms`);
    await sleep(pollMs);
  }
}

export class Edgestep {
  readonly base: string;
  readonly #auth: Record<string, string>;

  constructor(base: string, apiKey?: string) {
    this.base = base;
    this.#auth = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  }

  /** `POST /v1/runs`: 202 expected. */
  async submit(plan: BenchPlan | string): Promise<Submitted> {
    const body = typeof plan === "string" ? plan : JSON.stringify(plan);
    const { body: answer, ...r } = await postJson<{ runId: string }>(
      `${this.base}/v1/runs`,
      body,
      202,
      this.#auth,
    );
    return { ...r, id: answer.runId };
  }

  read(runId: string, view: "full" | "summary"): Promise<Read<RunDoc>> {
    const query = view === "summary" ? "?view=summary" : "";
    return getJson<RunDoc>(`${this.base}/v1/runs/${runId}${query}`, this.#auth);
  }

  /** Polls `GET /v1/runs/:id` until the run is final; fails unless it `completed`. */
  async follow(
    runId: string,
    pollMs: number,
    view: "full" | "summary",
    timeoutMs = 300_000,
  ): Promise<Followed<RunDoc>> {
    const seen = await follow(
      () => this.read(runId, view),
      (doc) => RUN_FINAL.has(doc.status),
      pollMs,
      timeoutMs,
      `run ${runId}`,
    );
    if (seen.doc.status !== "completed") {
      const failed = seen.doc.steps?.find((s) => s.status === "failed");
      throw new Error(
        `run ${runId} ended ${seen.doc.status}${failed ? `; step ${failed.id}: ${JSON.stringify(failed.error)}` : ""}`,
      );
    }
    return seen;
  }

  /** A GET with this client's key: status, size and time, whatever the status. */
  async get(path: string): Promise<{ status: number; text: string; bytes: number; ms: number }> {
    const t0 = performance.now();
    const res = await fetch(this.base + path, { headers: this.#auth });
    const text = await res.text();
    return { status: res.status, text, bytes: Buffer.byteLength(text), ms: performance.now() - t0 };
  }
}

export type WorkflowJob =
  { kind: "pass"; n: number } | { kind: "dag"; urls: string[]; deps: number[][] };

interface WorkflowStatus {
  status: string;
  error?: unknown;
  output?: unknown;
}

/** The Workflows Worker of bench/workflows/worker.js. */
export class Workflows {
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  async create(job: WorkflowJob): Promise<Submitted> {
    const { body, ...r } = await postJson<{ id: string }>(
      `${this.base}/create`,
      JSON.stringify(job),
      201,
    );
    return { ...r, id: body.id };
  }

  /** Polls the instance's status until it is `complete`; fails on `errored`/`terminated`. */
  async follow(id: string, pollMs: number, timeoutMs = 300_000): Promise<Followed<WorkflowStatus>> {
    const seen = await follow(
      () => getJson<WorkflowStatus>(`${this.base}/status?id=${encodeURIComponent(id)}`),
      (doc) => ["complete", "errored", "terminated"].includes(doc.status),
      pollMs,
      timeoutMs,
      `workflow ${id}`,
    );
    if (seen.doc.status !== "complete")
      throw new Error(`workflow ${id} ${seen.doc.status}: ${JSON.stringify(seen.doc.error)}`);
    return seen;
  }
}

/** One call the upstream logged: when it arrived and when it was answered (upstream clock, ms). */
export interface Call {
  at: number;
  endedAt: number;
}

/** The upstream's log, through bench/upstream.ts's control port. */
export class UpstreamLog {
  readonly control: string;

  constructor(control: string) {
    this.control = control;
  }

  async reset(): Promise<void> {
    const res = await fetch(`${this.control}/reset`, { method: "POST" });
    await res.arrayBuffer();
  }

  /** The calls tagged `tag`, by their `i`; fails unless there are exactly `expected`, all answered. */
  async calls(tag: string, expected: number): Promise<Map<number, Call>> {
    const { doc } = await getJson<{ i: number; at: number; endedAt: number | null }[]>(
      `${this.control}/calls?tag=${encodeURIComponent(tag)}`,
    );
    const byIndex = new Map<number, Call>();
    for (const c of doc) {
      if (c.endedAt === null) throw new Error(`${tag}: call ${c.i} was never answered`);
      if (byIndex.has(c.i)) throw new Error(`${tag}: call ${c.i} arrived twice (a retry?)`);
      byIndex.set(c.i, { at: c.at, endedAt: c.endedAt });
    }
    if (byIndex.size !== expected)
      throw new Error(`${tag}: the upstream saw ${byIndex.size} calls, expected ${expected}`);
    return byIndex;
  }
}
