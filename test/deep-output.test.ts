/**
 * Deeply nested outputs (issue 11, item 3): a step's stored output may nest at most
 * MAX_OUTPUT_DEPTH (default 128) levels. A deeper one fails the step as `invalid_data`
 * (not retried), and every read of the run still answers: status, results, the step,
 * events. Before the limit, 5,000 nested objects completed the step and then made
 * `GET /results` a 500 (structured clone of the RPC value overflowed the stack).
 */
import { describe, expect, it } from "vitest";
import { api, byId, drive, expectReadable, runStub, started, stepDetail } from "./helpers";
import { upstreamUrl } from "./helpers";

const MAX_DEPTH = 128;

/** `value` wrapped in `levels` objects `{ "k": ... }`. */
function nest(levels: number, value: unknown): unknown {
  let v = value;
  for (let k = 0; k < levels; k++) v = { k: v };
  return v;
}

const deepUrl = (depth: number, kind = "object") =>
  `${upstreamUrl}/deep?depth=${depth}&kind=${kind}`;

describe("outputs nested deeper than MAX_OUTPUT_DEPTH", () => {
  it.each([
    ["5,000 nested objects", 5_000, "object"],
    ["100,000 nested arrays", 100_000, "array"],
  ])(
    "an upstream answering %s fails its step as invalid_data, once; the run stays readable",
    async (_, depth, kind) => {
      const runId = await started({
        config: { retry: { maxRetries: 3, baseDelayMs: 0 } },
        steps: [
          { id: "deep", tool: "http", params: { url: deepUrl(depth, kind) } },
          { id: "other", tool: "pass", params: { value: 1 } },
        ],
      });
      const s = await drive(runId);
      expect(s.status).toBe("partial");
      expect(byId(s).deep).toMatchObject({
        status: "failed",
        attempts: 1,
        error: { category: "invalid_data" },
      });
      expect(byId(s).deep.error.message).toContain(`nested deeper than ${MAX_DEPTH} levels`);
      await expectReadable(runId, ["deep", "other"]);
    },
  );

  it("a registry tool's deep answer fails the same way (not retried as a crash)", async () => {
    const runId = await started({
      config: { retry: { maxRetries: 3, baseDelayMs: 0 } },
      steps: [{ id: "deep", tool: "deep_data", params: { depth: 100_000, kind: "array" } }],
    });
    const s = await drive(runId);
    expect(byId(s).deep).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { category: "invalid_data" },
    });
    await expectReadable(runId, ["deep"]);
  });

  it("bites just past the limit: 128 levels are stored and read back, 129 fail", async () => {
    const runId = await started({
      steps: [
        { id: "at", tool: "http", params: { url: deepUrl(MAX_DEPTH) } },
        { id: "past", tool: "http", params: { url: deepUrl(MAX_DEPTH + 1) } },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.at.status).toBe("succeeded");
    expect(steps.past).toMatchObject({ status: "failed", error: { category: "invalid_data" } });
    expect((await stepDetail(runId, "at")).data).toEqual(nest(MAX_DEPTH, "leaf"));
    await expectReadable(runId, ["at", "past"]);
  });

  it("pass steps that nest their input deeper each time fail once past the limit", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: nest(50, "x") } },
        { id: "b", tool: "pass", params: { value: nest(50, "${steps.a.data}") } },
        { id: "c", tool: "pass", params: { value: nest(50, "${steps.b.data}") } },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.b.status).toBe("succeeded");
    expect(steps.c).toMatchObject({ status: "failed", error: { category: "invalid_data" } });
    await expectReadable(runId, ["a", "b", "c"]);
  });

  it("a forEach item may nest one level less (the step's data is their array)", async () => {
    const runId = await started({
      steps: [
        {
          id: "fits",
          tool: "http",
          forEach: [MAX_DEPTH - 1, MAX_DEPTH - 1],
          params: { url: `${upstreamUrl}/deep?depth=\${item}` },
        },
        {
          id: "past",
          tool: "http",
          forEach: [MAX_DEPTH - 1, MAX_DEPTH],
          params: { url: `${upstreamUrl}/deep?depth=\${item}` },
        },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.fits.status).toBe("succeeded");
    expect((await stepDetail(runId, "fits")).data).toEqual([
      nest(MAX_DEPTH - 1, "leaf"),
      nest(MAX_DEPTH - 1, "leaf"),
    ]);
    expect(steps.past).toMatchObject({ status: "failed", error: { category: "invalid_data" } });
    expect(steps.past.error.message).toContain(
      `item output is nested deeper than ${MAX_DEPTH - 1}`,
    );
    await expectReadable(runId, ["fits", "past"]);
  });

  it("outputs stored before the limit existed read safely: up to 1,000 levels whole, deeper as a placeholder", async () => {
    const runId = await started({
      steps: ["cap", "legacy"].map((id) => ({ id, tool: "pass", params: { value: id } })),
    });
    expect((await drive(runId)).status).toBe("completed");
    // What an earlier version could store: no typed seam writes such rows any more.
    const arrays = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
    await runStub(runId).storeAsEarlierVersion("cap", { data: arrays(1_000) });
    await runStub(runId).storeAsEarlierVersion("legacy", { data: arrays(5_000) });
    await expectReadable(runId, ["cap", "legacy"]);
    const [cap, legacy] = (await (await api(`/v1/runs/${runId}/results`)).json()) as any[];
    expect(JSON.stringify(cap.data)).toBe(arrays(1_000));
    expect(legacy.data).toBe("[not shown: nested deeper than 1000 levels]");
  });

  it("a callback answer nested past MAX_JSON_DEPTH is a 400 and the step still waits for a good one", async () => {
    const runId = await started({
      steps: [
        { id: "cb", tool: "callback", params: { url: `${upstreamUrl}/echo` }, timeoutMs: 600_000 },
      ],
    });
    await drive(runId);
    const calls = (await (await fetch(`${upstreamUrl}/_log?prefix=/echo`)).json()) as any[];
    const { token } = JSON.parse(calls.find((c) => c.body.includes(runId)).body);
    const post = (output: unknown) =>
      api(`/v1/callbacks/${token}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ output }),
      });
    const deep = await post(nest(5_000, 1));
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as any).error.issues[0].message).toContain("MAX_JSON_DEPTH");
    expect((await post({ ok: true })).status).toBe(200);
    expect(byId(await drive(runId)).cb.status).toBe("succeeded");
  });
});
