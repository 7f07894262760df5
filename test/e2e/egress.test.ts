/**
 * ALLOWED_HOSTS at run time, end to end: a URL built by a template passes submission (it is
 * not known yet) and is checked when the step calls it. The Worker needs ALLOWED_HOSTS in its
 * own bindings for this, which only a booted Worker can have (the workers project shares one env).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../upstream/server.ts";
import { e2eClient } from "./client.ts";
import { bootWorker, type BootedWorker } from "./worker.ts";

let upstream: Upstream;
let worker: BootedWorker;

beforeAll(async () => {
  upstream = await startUpstream();
  worker = await bootWorker(upstream.url, { ALLOWED_HOSTS: new URL(upstream.url).hostname });
});

afterAll(async () => {
  await worker?.stop();
  await upstream?.close();
});

const { post, getJson, waitForEnd } = e2eClient(() => worker.url);

describe("e2e: ALLOWED_HOSTS at run time", () => {
  it("a templated URL that resolves outside the allowlist fails its step egress_denied, not retried", async () => {
    const plan = {
      input: { host: "evil.test" },
      config: { retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 } },
      steps: [{ id: "out", tool: "http", params: { url: "https://${input.host}/exfiltrate" } }],
    };
    const res = await post("/v1/runs", plan);
    expect(res.status).toBe(202);
    const status = await waitForEnd(res.headers.get("location")!);
    expect(status.status).toBe("failed");
    const step = await getJson(`/v1/runs/${status.runId}/steps/out`);
    expect(step.error).toMatchObject({
      category: "egress_denied",
      message: expect.stringContaining("evil.test"),
    });
    expect(step.attempts).toBe(1);
  });
});
