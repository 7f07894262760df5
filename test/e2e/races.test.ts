/**
 * Races between concurrent controls and the run's own alarms, over real HTTP with real
 * alarm delivery (Miniflare): whatever the interleaving, a run always finishes.
 */
import { describe, expect, it } from "vitest";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile();
const { post, waitFor, waitForEnd } = e2eClient(() => e2e.worker.url);

/** A bounded run of a 3-step chain that pauses after each iteration; `tag` marks its calls. */
function pausingChain(tag: string) {
  return {
    name: `resume-race-${tag}`,
    config: { mode: { type: "bounded", iterations: 1 } },
    steps: ["a", "b", "c"].map((id, i) => ({
      id,
      tool: "http",
      params: { url: `${e2e.upstream.url}/delay/5?race=${tag}-${id}` },
      ...(i > 0 && { dependsOn: [["a", "b", "c"][i - 1]] }),
    })),
  };
}

describe("concurrent resumes (issue 11.8)", () => {
  it("five resumes sent at once to a paused run: it always completes, each step called once", async () => {
    for (let round = 0; round < 8; round++) {
      const tag = `${Date.now()}-${round}`;
      const res = await post("/v1/runs", pausingChain(tag));
      expect(res.status).toBe(202);
      const statusUrl = res.headers.get("location")!;
      await waitFor(statusUrl, "the first pause", (s) => s.status === "paused");
      const resumes = await Promise.all(
        Array.from({ length: 5 }, () => post(`${statusUrl}/resume`, { iterations: 10 })),
      );
      const codes = resumes.map((r) => r.status).sort();
      expect(codes[0]).toBe(200); // one resume wins; the others find the run running (409)
      expect(codes.filter((c) => c !== 200 && c !== 409)).toEqual([]);
      const end = await waitForEnd(statusUrl, 10_000);
      expect(end.status).toBe("completed");
      const calls = e2e.upstream.calls.filter((c) => c.query.includes(`race=${tag}-`));
      expect(calls.map((c) => new URLSearchParams(c.query).get("race")).sort()).toEqual([
        `${tag}-a`,
        `${tag}-b`,
        `${tag}-c`,
      ]);
    }
  });
});
