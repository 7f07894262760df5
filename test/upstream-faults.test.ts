/**
 * Malformed upstream answers over a whole run: one plan (failFast: false) calls the
 * loopback upstream's `/bad-json` (invalid JSON under a JSON content type), `/huge`
 * (8 MiB, chunked, far past MAX_OUTPUT_BYTES = 256 KiB) and `/endless` (a body that
 * never ends), plus a good `/echo`. Each bad answer fails only its own step, with a
 * category and a message that say what went wrong; the run ends `partial`.
 * (src/tools/http.test.ts has the same faults against the http tool alone.)
 */
import { describe, expect, it } from "vitest";
import { api, drive, results, runCalls, submit, unique, upstreamUrl } from "./helpers";

describe("malformed upstream responses fail only their step", () => {
  it("bad JSON, an oversized body and an endless body: the run is partial, the good step succeeds", async () => {
    const http = (id: string, path: string, extra: Record<string, unknown> = {}) => ({
      id,
      tool: "http",
      params: { url: `${upstreamUrl}${path}`, query: { case: id } },
      retry: { maxRetries: 0 },
      ...extra,
    });
    const plan = {
      name: unique("upstream-faults"),
      config: { failFast: false, stepTimeoutMs: 5_000 },
      steps: [
        http("good", "/echo"),
        http("badJson", "/bad-json"),
        http("huge", "/huge"),
        http("endless", "/endless", { timeoutMs: 300 }),
      ],
    };
    const { res, body } = await submit(plan);
    expect(res.status, JSON.stringify(body)).toBe(202);
    const started = Date.now();
    const run = await drive(body.runId, 10);
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(run.status).toBe("partial");
    expect(run.summary).toMatchObject({ totalSteps: 4, successfulSteps: 1, failedSteps: 3 });
    const step = (id: string) => run.steps.find((s: any) => s.id === id);
    expect(step("good").status).toBe("succeeded");

    expect(step("badJson")).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { category: "invalid_data", status: 200 },
    });
    expect(step("badJson").error.message).toMatch(/not valid JSON/);

    expect(step("huge")).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { category: "output_too_large", status: 200 },
    });
    expect(step("huge").error.message).toMatch(/exceeds 1048576 bytes \(4 × MAX_OUTPUT_BYTES\)/);

    expect(step("endless")).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { category: "timeout" },
    });
    expect(step("endless").error.message).toMatch(/no response within 300 ms/);

    // The good step's data is the upstream's echo; the bad ones stored no data.
    const byId = new Map((await results(body.runId)).map((r: any) => [r.stepId, r]));
    expect(byId.get("good")).toMatchObject({
      success: true,
      data: { method: "GET", query: { case: "good" } },
    });
    for (const id of ["badJson", "huge", "endless"])
      expect(byId.get(id)).toMatchObject({ success: false, data: null });

    // Each upstream endpoint was called exactly once (maxRetries: 0), and the status API still answers.
    for (const path of ["/echo", "/bad-json", "/huge", "/endless"]) {
      const calls = await runCalls(body.runId, path);
      expect(
        calls.filter((c) => c.path === path),
        path,
      ).toHaveLength(1);
    }
    expect((await api(`/v1/runs/${body.runId}/events`)).status).toBe(200);
  });
});
