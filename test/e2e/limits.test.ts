/**
 * The configurable limits at non-default values (README "Configuration"): the built Worker
 * boots with small values, and each limit bites exactly past its value, not at it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const LIMITS = {
  MAX_PLAN_BYTES: 4096,
  MAX_STEPS_PER_PLAN: 10,
  MAX_TEMPLATE_LENGTH: 32,
  MAX_JSON_DEPTH: 8,
  MAX_OUTPUT_BYTES: 1024,
  MAX_EVENTS_PER_RUN: 20,
  MAX_OUTPUT_DEPTH: 8,
};

const e2e = bootForFile(() =>
  Object.fromEntries(Object.entries(LIMITS).map(([k, v]) => [k, String(v)])),
);

const { post, getJson, waitForEnd } = e2eClient(() => e2e.worker.url);

/** Submits a plan; returns the response and its JSON body. */
async function submit(
  plan: unknown,
): Promise<{ status: number; body: any; location: string | null }> {
  const res = await post("/v1/runs", plan);
  return { status: res.status, body: await res.json(), location: res.headers.get("location") };
}

async function accepted(plan: unknown): Promise<string> {
  const { status, body, location } = await submit(plan);
  expect(status, JSON.stringify(body)).toBe(202);
  return location!;
}

const passSteps = (n: number) =>
  Array.from({ length: n }, (_, k) => ({ id: `s${k}`, tool: "pass", params: { value: k } }));

/** A plan body of exactly `bytes` bytes (padded in `input`). */
function planOfBytes(bytes: number): string {
  const plan = { input: { pad: "" }, steps: passSteps(1) };
  plan.input.pad = "x".repeat(bytes - Buffer.byteLength(JSON.stringify(plan)));
  const body = JSON.stringify(plan);
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

/**
 * A plan whose JSON nests `levels` containers deep: root (1), steps (2), the step (3),
 * params (4), then arrays around the value.
 */
function planOfDepth(levels: number): unknown {
  let value: unknown = 1;
  for (let k = 0; k < levels - 4; k++) value = [value];
  return { steps: [{ tool: "pass", params: { value } }] };
}

/** A `${...}` expression of exactly `length` characters, and the input it reads. */
function templateOfLength(length: number): { input: unknown; steps: unknown[] } {
  const key = "k".repeat(length - "input.".length);
  return { input: { [key]: 1 }, steps: [{ tool: "pass", params: { value: `\${input.${key}}` } }] };
}

describe("e2e: limits at non-default values", () => {
  it("MAX_PLAN_BYTES: a body of exactly the limit is accepted", async () => {
    await accepted(planOfBytes(LIMITS.MAX_PLAN_BYTES));
  });

  it("MAX_PLAN_BYTES: one byte more is a 413", async () => {
    const { status, body } = await submit(planOfBytes(LIMITS.MAX_PLAN_BYTES + 1));
    expect(status).toBe(413);
    expect(body.error.message).toMatch(/MAX_PLAN_BYTES/);
  });

  it("MAX_STEPS_PER_PLAN: a plan of exactly the limit is accepted", async () => {
    await accepted({ steps: passSteps(LIMITS.MAX_STEPS_PER_PLAN) });
  });

  it("MAX_STEPS_PER_PLAN: one step more is a 400", async () => {
    const { status, body } = await submit({ steps: passSteps(LIMITS.MAX_STEPS_PER_PLAN + 1) });
    expect(status).toBe(400);
    expect(body.error.issues[0].message).toMatch(/at most 10 steps \(MAX_STEPS_PER_PLAN\)/);
  });

  it("MAX_TEMPLATE_LENGTH: an expression of exactly the limit is accepted", async () => {
    await accepted(templateOfLength(LIMITS.MAX_TEMPLATE_LENGTH));
  });

  it("MAX_TEMPLATE_LENGTH: one character more is a 400", async () => {
    const { status, body } = await submit(templateOfLength(LIMITS.MAX_TEMPLATE_LENGTH + 1));
    expect(status).toBe(400);
    expect(body.error.issues[0]).toMatchObject({
      path: "steps.0.params.value",
      message: expect.stringMatching(/33 characters, more than 32 \(MAX_TEMPLATE_LENGTH\)/),
    });
  });

  it("MAX_JSON_DEPTH: a plan nested exactly the limit deep is accepted", async () => {
    await accepted(planOfDepth(LIMITS.MAX_JSON_DEPTH));
  });

  it("MAX_JSON_DEPTH: one level more is a 400", async () => {
    const { status, body } = await submit(planOfDepth(LIMITS.MAX_JSON_DEPTH + 1));
    expect(status).toBe(400);
    expect(body.error.issues[0].message).toMatch(/deeper than 8 levels \(MAX_JSON_DEPTH\)/);
  });

  it("MAX_OUTPUT_BYTES: a step output of exactly the limit succeeds; one byte more fails as output_too_large", async () => {
    // A JSON string's output is its characters plus two quotes.
    const status = await waitForEnd(
      await accepted({
        steps: [
          { id: "at", tool: "pass", params: { value: "x".repeat(LIMITS.MAX_OUTPUT_BYTES - 2) } },
          { id: "over", tool: "pass", params: { value: "x".repeat(LIMITS.MAX_OUTPUT_BYTES - 1) } },
        ],
      }),
    );
    expect(status.status).toBe("partial");
    expect(status.steps[0].status).toBe("succeeded");
    expect(status.steps[1]).toMatchObject({
      status: "failed",
      error: { category: "output_too_large" },
    });
  });

  it("MAX_OUTPUT_BYTES: forEach items under the limit whose total is one byte over fail the step as output_too_large", async () => {
    // ["x…","x…"]: 2 brackets + 1 comma + 2×2 quotes around the items' characters
    const chars = LIMITS.MAX_OUTPUT_BYTES - 7;
    const status = await waitForEnd(
      await accepted({
        steps: [
          {
            id: "each",
            tool: "pass",
            forEach: ["x".repeat(chars - 300), "x".repeat(301)],
            params: { value: "${item}" },
          },
        ],
      }),
    );
    expect(status.steps[0]).toMatchObject({
      status: "failed",
      error: { category: "output_too_large" },
    });
    expect(status.steps[0].error.message).toMatch(/total 1025 bytes/);
  });

  it("MAX_OUTPUT_DEPTH: an output nested exactly the limit deep succeeds; one level more fails as invalid_data", async () => {
    const deep = (depth: number) => `${e2e.upstream.url}/deep?depth=${depth}`;
    const location = await accepted({
      steps: [
        { id: "at", tool: "http", params: { url: deep(LIMITS.MAX_OUTPUT_DEPTH) } },
        { id: "over", tool: "http", params: { url: deep(LIMITS.MAX_OUTPUT_DEPTH + 1) } },
        { id: "pass", tool: "pass", params: { value: { k: "${steps.at.data}" } } },
      ],
    });
    const status = await waitForEnd(location);
    expect(status.steps.map((s: any) => s.status)).toEqual(["succeeded", "failed", "failed"]);
    for (const step of status.steps.slice(1)) {
      expect(step.error).toMatchObject({ category: "invalid_data" });
      expect(step.error.message).toMatch(/nested deeper than 8 levels \(MAX_OUTPUT_DEPTH\)/);
    }
    const [at] = await getJson(`${location}/results`);
    expect(JSON.stringify(at.data)).toBe(`${'{"k":'.repeat(8)}"leaf"${"}".repeat(8)}`);
  });

  describe("MAX_EVENTS_PER_RUN", () => {
    let runId: string;
    let total: number;

    beforeAll(async () => {
      // 10 steps: each starts and succeeds, besides the run's own events: far more than 20.
      const final = await waitForEnd(
        await accepted({ steps: passSteps(LIMITS.MAX_STEPS_PER_PLAN) }),
      );
      expect(final.status).toBe("completed");
      runId = final.runId;
      const page = await getJson(`/v1/runs/${runId}/events?limit=1000`);
      total = page.dropped + page.events.length;
    });

    it("a finished run keeps at most MAX_EVENTS_PER_RUN events, the newest; `dropped` counts the rest", async () => {
      const page = await getJson(`/v1/runs/${runId}/events?after=0&limit=1000`);
      expect(page.dropped).toBeGreaterThan(0);
      expect(page.events).toHaveLength(LIMITS.MAX_EVENTS_PER_RUN);
      const seqs = page.events.map((e: { seq: number }) => e.seq);
      // the oldest seqs are gone; the kept ones are the last, consecutive, ending with run_finished
      expect(seqs[0]).toBe(page.dropped + 1);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, k) => page.dropped + 1 + k));
      expect(page.events.at(-1).type).toBe("run_finished");
      expect(total).toBeGreaterThan(LIMITS.MAX_EVENTS_PER_RUN);
    });

    it("an SSE stream from after=0 says how many were dropped before the first kept event, and ends", async () => {
      const res = await fetch(`${e2e.worker.url}/v1/runs/${runId}/events?after=0`, {
        headers: { accept: "text/event-stream" },
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(200);
      // text() resolves only once the stream ended: the run is final and every event was sent
      const blocks = (await res.text()).split("\n\n").filter((b) => b.trim() !== "");
      const dropped = total - LIMITS.MAX_EVENTS_PER_RUN;
      expect(blocks[0]).toBe(`: ${dropped} events dropped (MAX_EVENTS_PER_RUN)`);
      const ids = blocks.slice(1).map((b) => Number(/^id: (\d+)$/m.exec(b)?.[1]));
      expect(ids).toEqual(
        Array.from({ length: LIMITS.MAX_EVENTS_PER_RUN }, (_, k) => dropped + 1 + k),
      );
      expect(blocks.at(-1)).toMatch(/^event: run_finished$/m);
    });
  });
});
