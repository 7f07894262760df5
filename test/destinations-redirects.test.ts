/**
 * Redirects and flow control (SPEC 10): a destination's limits and pauses hold for every call
 * to it, one a redirect leads there included. A call is admitted where it starts, so a
 * redirect into another destination with limits is not followed, one into a paused destination
 * waits as a 429 would, and a 429 behind a redirect pauses the host that answered it.
 */
import { describe, expect, it } from "vitest";
import { destinationListSchema } from "../src/api/schemas";
import { api, byId, fireAlarm, hostUrl, runCalls, started, status, unique, until } from "./helpers";

/** A one-step run calling `from`'s `/redirect` to `to`. */
function redirecting(from: string, to: string) {
  const url = hostUrl(from, `/redirect?to=${encodeURIComponent(to)}`);
  return started({
    steps: [
      { id: "hop", tool: "http", params: { url }, retry: { baseDelayMs: 0, jitter: "none" } },
    ],
  });
}

async function pausedUntilOf(destination: string): Promise<string | null | undefined> {
  const list = destinationListSchema.parse(await (await api("/v1/destinations")).json());
  return list.find((d) => d.destination === destination)?.pausedUntil;
}

describe("a redirect passes the gate of the destination it leads to", () => {
  it("a redirect into another destination with limits is not followed: egress_denied, no call there", async () => {
    const tag = unique("lim");
    const runId = await redirecting(
      unique("start"),
      hostUrl("redirect-target", `/work?ms=1&tag=${tag}`),
    );
    await fireAlarm(runId);
    expect(byId(await status(runId)).hop).toMatchObject({
      status: "failed",
      attempts: 1,
      error: {
        category: "egress_denied",
        message: expect.stringContaining(
          "redirect-target.upstream.test, a destination with limits",
        ),
      },
    });
    expect(await runCalls(runId, "/work")).toEqual([]);
  });

  it("a 429 behind a redirect pauses the host that answered; a redirect into it then waits as a 429 would", async () => {
    const [front, back] = [unique("front"), unique("back")];
    const backHost = `${back}.upstream.test`;
    const answered = hostUrl(back, `/script/${unique("k")}?plan=429,200&retryAfter=30`);
    const first = await redirecting(front, answered);
    await fireAlarm(first);
    expect(byId(await status(first)).hop).toMatchObject({ status: "retrying" });
    await until(
      async () => typeof (await pausedUntilOf(backHost)) === "string",
      `${backHost} paused`,
    );
    expect(await pausedUntilOf(`${front}.upstream.test`)).toBeUndefined();

    const second = await redirecting(front, hostUrl(back, "/work?ms=1"));
    await fireAlarm(second);
    expect(byId(await status(second)).hop).toMatchObject({
      status: "retrying",
      error: {
        category: "rate_limited",
        message: expect.stringContaining(`${backHost}, which is paused`),
      },
    });
    expect(await runCalls(second, "/work")).toEqual([]);
  });
});
