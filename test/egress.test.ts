import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";

const app = createApp();
const restricted = { ...env, ALLOWED_HOSTS: "api.allowed.test:443, *.trusted.test" };

async function submit(plan: unknown) {
  const res = await app.fetch(
    new Request("http://edgestep.test/v1/plans/validate", {
      method: "POST",
      body: JSON.stringify(plan),
    }),
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
    const { body } = await submit({
      ...http("https://api.allowed.test/"),
      webhook: { url: "https://evil.test/hook" },
    });
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues[0].path).toBe("webhook.url");
  });

  it("rejects a templated webhook URL leaving the allowlist (webhook URLs are not templates)", async () => {
    const { status, body } = await submit({
      ...http("https://api.allowed.test/"),
      webhook: { url: "https://evil.test/hook?x=${input.x}" },
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues.map((i: any) => i.path)).toEqual(["webhook.url"]);
  });

  it("is invalid_plan, listing every issue, when a denied host is not the only problem", async () => {
    const { status, body } = await submit({
      steps: [
        { id: "a", tool: "http", params: { url: "https://evil.test/x" } },
        { id: "a", tool: "pass" },
      ],
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues.map((i: any) => i.path).sort()).toEqual([
      "steps.0.params.url",
      "steps.1.id",
    ]);
  });

  it("accepts listed hosts (ports ignored) and wildcard subdomains", async () => {
    expect((await submit(http("https://api.allowed.test:8443/x"))).status).toBe(200);
    expect((await submit(http("https://a.b.trusted.test/x"))).status).toBe(200);
    expect((await submit(http("https://trusted.test/x"))).status).toBe(400);
  });

  it("rejects a callback step's URL leaving the allowlist", async () => {
    const { body } = await submit({
      steps: [{ tool: "callback", params: { url: "https://evil.test/notify" } }],
    });
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues.map((i: any) => i.path)).toEqual(["steps.0.params.url"]);
  });

  it("rejects a compensate URL leaving the allowlist", async () => {
    const undo = { tool: "http", params: { url: "https://evil.test/undo", method: "DELETE" } };
    const { status, body } = await submit({ steps: [{ tool: "pass", compensate: undo }] });
    expect(status).toBe(400);
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues.map((i: any) => i.path)).toEqual(["steps.0.compensate.params.url"]);
  });

  it("rejects a compensate URL that is not http(s) as invalid_plan", async () => {
    const undo = { tool: "http", params: { url: "ftp://api.allowed.test/undo" } };
    const { status, body } = await submit({
      steps: [{ tool: "pass" }, { tool: "pass", compensate: undo }],
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues.map((i: any) => i.path)).toEqual(["steps.1.compensate.params.url"]);
  });

  it("rejects a registry tool whose TOOLS URL is outside the allowlist, at the step's tool", async () => {
    // The test registry's tools all call the loopback upstream, which the allowlist leaves out.
    const { status, body } = await submit({ steps: [{ tool: "facilities_list", params: {} }] });
    expect(status).toBe(400);
    expect(body.error.code).toBe("egress_denied");
    expect(body.error.issues).toEqual([
      { path: "steps.0.tool", message: expect.stringContaining("facilities_list") },
    ]);
  });

  it("leaves URLs built by templates to the check at call time", async () => {
    const plan = {
      input: { host: "evil.test" },
      steps: [{ tool: "http", params: { url: "https://${input.host}/x" } }],
    };
    expect((await submit(plan)).status).toBe(200);
  });
});
