import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";

const app = createApp();
const restricted = { ...env, ALLOWED_HOSTS: "api.allowed.test:443, *.trusted.test" };

async function submit(plan: unknown) {
  const res = await app.fetch(
    new Request("http://edgestep.test/v1/plans/validate", { method: "POST", body: JSON.stringify(plan) }),
    restricted,
  );
  return { status: res.status, body: (await res.json()) as any };
}

const http = (url: string) => ({ steps: [{ tool: "http", params: { url } }] });

describe("ALLOWED_HOSTS at submission", () => {
  it("rejects an http step leaving the allowlist with egress_denied and its path", async () => {
    const { status, body } = await submit(http("https://evil.test/x"));
    expect(status).toBe(400);
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues[0].path).toBe("steps.0.params.url");
  });

  it("rejects a webhook URL leaving the allowlist", async () => {
    const { body } = await submit({ ...http("https://api.allowed.test/"), webhook: { url: "https://evil.test/hook" } });
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues[0].path).toBe("webhook.url");
  });

  it("accepts listed hosts (ports ignored) and wildcard subdomains", async () => {
    expect((await submit(http("https://api.allowed.test:8443/x"))).status).toBe(200);
    expect((await submit(http("https://a.b.trusted.test/x"))).status).toBe(200);
    expect((await submit(http("https://trusted.test/x"))).status).toBe(400);
  });

  it("leaves URLs built by templates to the check at call time", async () => {
    const plan = { input: { host: "evil.test" }, steps: [{ tool: "http", params: { url: "https://${input.host}/x" } }] };
    expect((await submit(plan)).status).toBe(200);
  });
});
