/**
 * A variable that breaks its rules is a deployment error (README, Configuration): every
 * request that needs the settings answers `500 misconfigured` naming it, the run routes too
 * (a run's Durable Object parses the settings as well, but an error thrown there would reach
 * the Worker without its name).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";

const RUN = `run_${"0".repeat(32)}`;

describe("a deployment with a bad TOOLS", () => {
  it("answers the run routes, validation and callbacks with a 500 naming TOOLS", async () => {
    const app = createApp();
    // A registry entry named like a built-in could never be called: refused, not ignored.
    const broken = { ...env, TOOLS: JSON.stringify({ pass: { url: "https://api.test/p" } }) };
    const requests = [
      new Request(`http://edgestep.test/v1/runs/${RUN}`),
      new Request(`http://edgestep.test/v1/runs/${RUN}/results`),
      new Request(`http://edgestep.test/v1/runs/${RUN}/cancel`, { method: "POST" }),
      new Request(`http://edgestep.test/v1/callbacks/cb_${"0".repeat(32)}_${"0".repeat(64)}`, {
        method: "POST",
        body: JSON.stringify({ output: 1 }),
      }),
      new Request("http://edgestep.test/v1/plans/validate", {
        method: "POST",
        body: JSON.stringify({ steps: [{ tool: "pass" }] }),
      }),
      new Request("http://edgestep.test/openapi.json"),
    ];
    for (const request of requests) {
      const res = await app.fetch(request, broken);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect([request.url, res.status, error.code]).toEqual([request.url, 500, "misconfigured"]);
      expect(error.message).toMatch(/configuration is invalid: TOOLS is invalid/);
      expect(error.message).toContain('"pass" is a built-in tool');
    }
  });
});

describe("the OpenAPI document", () => {
  it("declares the 500 misconfigured its own route can answer, as every /v1 route's", async () => {
    const res = await createApp().fetch(new Request("http://edgestep.test/openapi.json"), env);
    const doc = (await res.json()) as any;
    expect(Object.keys(doc.paths["/openapi.json"].get.responses)).toEqual(["200", "500"]);
    expect(doc.paths["/v1/runs"].post.responses["500"]).toBeDefined();
  });
});
