import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import openApiFile from "../docs/openapi.json";
import planSchemaFile from "../docs/plan.schema.json";
import { createApp } from "../src/api/app";
import { EdgestepClient } from "../src/client/index.ts";
import { LOCAL_SERVER, openApiDocument } from "../src/api/openapi/document";
import {
  controlResultSchema,
  errorSchema,
  eventsPageSchema,
  healthSchema,
  runCreatedSchema,
  runListSchema,
  runPlanSchema,
  runStatusSchema,
  statsSchema,
  stepDetailSchema,
  stepResultSchema,
  validateResultSchema,
} from "../src/api/schemas";
import { planJsonSchema } from "../src/engine/plan-json-schema";
import { DEFAULT_MAX_STEPS } from "../src/engine/plan-schema";
import { api, post, start, status, stepDetail } from "./helpers";
import { drive, fireAlarm, settle } from "./helpers";
import { unique, upstreamUrl } from "./helpers";

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document", async () => {
    const res = await api("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.schemas.Plan.properties.steps.type).toBe("array");
  });

  it("lists every route the Worker serves", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map(
        (r) =>
          `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "") || "/"}`,
      );
    expect(served.length).toBeGreaterThan(10);
    for (const route of served) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method], route).toBeDefined();
    }
  });

  it("describes the plan body with the same schema that validates it, as a referenced component", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const body = doc.paths["/v1/runs"].post.requestBody.content["application/json"].schema;
    expect(body).toEqual({ $ref: "#/components/schemas/Plan" });
    expect(
      doc.paths["/v1/plans/validate"].post.requestBody.content["application/json"].schema,
    ).toEqual(body);
    expect(doc.components.schemas.Plan.additionalProperties).toBe(false);
    expect(doc.components.schemas.PlanConfig.properties.maxParallel).toMatchObject({
      minimum: 1,
      maximum: 100,
    });
  });

  it("states the Worker's MAX_STEPS_PER_PLAN as the plan's step limit", async () => {
    const res = await createApp().fetch(new Request("http://edgestep.test/openapi.json"), {
      ...env,
      MAX_STEPS_PER_PLAN: "7",
    });
    const doc = (await res.json()) as any;
    expect(doc.components.schemas.Plan.properties.steps.maxItems).toBe(7);
  });

  it("names the Worker that serves it as the server", async () => {
    const res = await createApp().fetch(
      new Request("https://edgestep.example.com/openapi.json"),
      env,
    );
    const doc = (await res.json()) as any;
    expect(doc.servers).toEqual([
      { url: "https://edgestep.example.com", description: "this Worker" },
    ]);
  });

  it("gives every operation a unique operationId usable as a method name", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const ids = Object.values<any>(doc.paths).flatMap((ops) =>
      Object.values<any>(ops).map((op) => op.operationId),
    );
    expect(ids.length).toBeGreaterThan(15);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("the typed client has a method named by every operationId (the document itself aside)", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const ids: string[] = Object.values<any>(doc.paths).flatMap((ops) =>
      Object.values<any>(ops).map((op) => op.operationId),
    );
    const client = new EdgestepClient({ url: "http://edgestep.test" });
    const missing = ids.filter((id) => id !== "getOpenApiDocument" && !(id in client));
    expect(missing).toEqual([]);
  });

  it("references components for every JSON body instead of inlining copies", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const refs = (schema: any): boolean =>
      typeof schema.$ref === "string" ||
      (schema.type === "array" && refs(schema.items)) ||
      (Array.isArray(schema.oneOf) && schema.oneOf.every(refs));
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      if (path === "/openapi.json") continue;
      for (const [method, op] of Object.entries<any>(operations)) {
        const bodies = [op.requestBody, ...Object.values<any>(op.responses)];
        for (const b of bodies) {
          const schema = b?.content?.["application/json"]?.schema;
          if (schema) expect(refs(schema), `${method} ${path}`).toBe(true);
        }
      }
    }
  });

  it("types requests in their input shape and responses in their output shape", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const { Plan, PlanConfig, RunStatus } = doc.components.schemas;
    // What a user writes: defaulted fields are optional, their defaults said in words.
    expect(Plan.required).toEqual(["steps"]);
    expect(PlanConfig.required).toBeUndefined();
    expect(PlanConfig.properties.maxParallel.default).toBeUndefined();
    expect(PlanConfig.properties.maxParallel.description).toMatch(/Default: 5/);
    // What the Worker answers: a run's mode always has its iteration limit.
    const continuous = RunStatus.properties.mode.oneOf.find(
      (m: any) => m.properties.type.const === "continuous",
    );
    expect(continuous.required).toContain("maxIterations");
  });

  it("declares a 401 on every operation that needs an API key and none on the open ones; a 503 on every /v1 one", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        const open = Array.isArray(op.security) && op.security.length === 0;
        expect(op.responses["401"] !== undefined, `${method} ${path}`).toBe(!open);
        // auth_not_configured where a key is needed; unavailable wherever an object answers.
        expect(op.responses["503"] !== undefined, `${method} ${path}`).toBe(
          path.startsWith("/v1/"),
        );
      }
    }
    expect(doc.paths["/v1/runs/{runId}"].get.responses["401"]).toBeDefined();
    expect(doc.paths["/v1/callbacks/{token}"].post.responses["503"].description).toMatch(
      /^unavailable/,
    );
  });

  it("declares POST /v1/runs's 429 with its Retry-After header", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const tooMany = doc.paths["/v1/runs"].post.responses["429"];
    expect(tooMany.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Error",
    });
    expect(doc.components.schemas.Error.properties.error).toBeDefined();
    expect(tooMany.headers["Retry-After"]).toBeDefined();
  });
});

/**
 * Real responses parsed with the zod schemas the OpenAPI document is generated from: a field
 * a view gains without the schema, or one the schema requires that the view lacks, fails here.
 */
describe("responses match the OpenAPI response schemas", () => {
  const script = (key: string, extra = "") => `${upstreamUrl}/script/${key}${extra}`;

  /** Strict whatever the schema's mode: an undeclared key is an issue (strict objects) or stripped (then unequal). */
  function expectShape(schema: z.ZodType, value: unknown) {
    const parsed = schema.safeParse(value);
    expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(value).slice(0, 2000)).toEqual(
      [],
    );
    expect(parsed.data).toStrictEqual(value);
  }

  async function json(path: string): Promise<any> {
    const res = await api(path);
    expect(res.status, path).toBe(200);
    return res.json();
  }

  /** Fires alarms until none is due (webhook deliveries and compensations run after the run ends). */
  async function finished(runId: string): Promise<any> {
    await drive(runId);
    await settle(runId);
    return status(runId);
  }

  it("a run waiting at the risk gate: its creation, status (pendingApproval) and events", async () => {
    const key = unique("oa-gate");
    const res = await api("/v1/runs", {
      method: "POST",
      body: JSON.stringify({
        config: { requireApprovalForRisk: "high" },
        steps: [{ id: "x", tool: "http", params: { url: script(`${key}-x`) }, risk: "high" }],
      }),
    });
    const created = (await res.json()) as any;
    expectShape(runCreatedSchema, created);
    const s = await status(created.runId);
    expect(s.pendingApproval).toEqual([{ gate: "risk", stepIds: ["x"] }]);
    expectShape(runStatusSchema, s);
    expectShape(eventsPageSchema, await json(`/v1/runs/${created.runId}/events`));
  });

  it("a run whose approval step waits: status (pendingApproval, waitingFor) and step detail", async () => {
    const { runId } = await start({ steps: [{ id: "ok", tool: "approval" }] });
    const s = await drive(runId);
    expect(s.pendingApproval).toEqual([{ gate: "step", stepIds: ["ok"] }]);
    expectShape(runStatusSchema, s);
    expectShape(stepDetailSchema, await stepDetail(runId, "ok"));
    const answered = await post(`/v1/runs/${runId}/approve`, { approved: true });
    expectShape(controlResultSchema, answered.body);
  });

  it("a rolled-back run with a webhook: status (rollback, webhook deliveries), results, step detail (attemptLog), events", async () => {
    const key = unique("oa-rb");
    const { runId } = await start({
      config: { rollback: true },
      webhook: { url: script(`${key}-hook`) },
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: script(`${key}-a`) },
          compensate: { tool: "http", params: { url: script(`${key}-undo`) } },
        },
        {
          id: "c",
          tool: "http",
          params: { url: script(`${key}-c`, "?plan=404") },
          dependsOn: ["a"],
          onFailure: "fail_run",
        },
      ],
    });
    const s = await finished(runId);
    expect(s.rollback?.state).toBe("completed");
    expect(s.webhook?.deliveries.length).toBeGreaterThan(0);
    expectShape(runStatusSchema, s);
    expectShape(stepResultSchema.array(), await json(`/v1/runs/${runId}/results`));
    const failed = await stepDetail(runId, "c");
    expect(failed.attemptLog[0]).toMatchObject({ category: expect.any(String), status: 404 });
    expectShape(stepDetailSchema, failed);
    expectShape(eventsPageSchema, await json(`/v1/runs/${runId}/events?limit=1000`));
    expectShape(runPlanSchema, await json(`/v1/runs/${runId}/plan`));
  });

  it("a forEach step: status (items) and step detail (per-item attemptLog)", async () => {
    const key = unique("oa-fe");
    const { runId } = await start({
      steps: [
        {
          id: "each",
          tool: "http",
          forEach: ["a", "b"],
          params: { url: script(`${key}-\${index}`) },
        },
      ],
    });
    const s = await drive(runId);
    expect(s.steps[0].items).toMatchObject({ total: 2, succeeded: 2 });
    expectShape(runStatusSchema, s);
    const detail = await stepDetail(runId, "each");
    expect(detail.attemptLog.map((a: any) => a.item).sort()).toEqual([0, 1]);
    expectShape(stepDetailSchema, detail);
  });

  it("a step waiting for its retry: status (nextAttemptAt, error) and step detail", async () => {
    const key = unique("oa-retry");
    const { runId } = await start({
      steps: [
        {
          id: "r",
          tool: "http",
          params: { url: script(`${key}-r`, "?plan=503,200") },
          retry: { maxRetries: 2, baseDelayMs: 60_000, jitter: "none" },
        },
      ],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.steps[0]).toMatchObject({
      status: "retrying",
      nextAttemptAt: expect.any(String),
      error: expect.anything(),
    });
    expectShape(runStatusSchema, s);
    expectShape(stepDetailSchema, await stepDetail(runId, "r"));
  });

  it("a run with repairs: status (pendingReplan, waitingFor replan, replans), step detail, plan, the replan route's bodies", async () => {
    const { runId } = await start({
      replan: { mode: "human", cooldownMs: 0 },
      steps: [
        { id: "v", tool: "pass", params: { value: 0 }, verify: "${output}" },
        { id: "w", tool: "pass", params: { value: 0 }, verify: "${output}" },
      ],
    });
    await fireAlarm(runId);
    const waiting = await status(runId);
    expect(waiting.pendingReplan).toHaveLength(2);
    expect(waiting.steps[0]).toMatchObject({ status: "waiting", waitingFor: "replan" });
    expectShape(runStatusSchema, waiting);
    expectShape(stepDetailSchema, await stepDetail(runId, "v"));
    const invalid = await post(`/v1/runs/${runId}/replan`, { steps: [{ id: "v", tool: "x" }] });
    expect(invalid.res.status).toBe(400);
    expectShape(errorSchema, invalid.body);
    const repaired = await post(`/v1/runs/${runId}/replan`, {
      stepId: "v",
      steps: [
        { id: "v", tool: "pass", params: { value: 1 } },
        { id: "n", tool: "pass" },
      ],
    });
    expectShape(controlResultSchema, repaired.body);
    await post(`/v1/runs/${runId}/replan`, { giveUp: true });
    const s = await drive(runId);
    expect(s.replans.map((r: any) => r.answer)).toEqual(["repaired", "declined"]);
    expectShape(runStatusSchema, s);
    expectShape(runPlanSchema, await json(`/v1/runs/${runId}/plan`));
  });

  it("a listing (tags, summary, progress, next) and the stats", async () => {
    const tag = unique("oa-list");
    for (let i = 0; i < 3; i++) {
      await start({ name: "listed", tags: { oa: tag }, steps: [{ id: "p", tool: "pass" }] });
    }
    const page = await json(`/v1/runs?tag=oa:${tag}&limit=2`);
    expect(page.runs).toHaveLength(2);
    expect(page.next).toEqual(expect.any(String));
    expectShape(runListSchema, page);
    expectShape(statsSchema, await json("/v1/stats"));
  });

  it("validation (with warnings), creation with warnings, health and error bodies", async () => {
    const valid = await api("/v1/plans/validate", {
      method: "POST",
      body: JSON.stringify({ steps: [{ tool: "pass" }] }),
    });
    expectShape(validateResultSchema, await valid.json());
    const noted = { steps: [{ tool: "pass", note: "an agent's note" }] };
    const warned = await api("/v1/plans/validate", { method: "POST", body: JSON.stringify(noted) });
    const warnedBody = (await warned.json()) as any;
    expect(warnedBody.warnings).toHaveLength(1);
    expectShape(validateResultSchema, warnedBody);
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(noted) });
    const createdBody = (await created.json()) as any;
    expect(createdBody.warnings).toHaveLength(1);
    expectShape(runCreatedSchema, createdBody);
    expectShape(healthSchema, await json("/healthz"));
    const invalid = await api("/v1/plans/validate", {
      method: "POST",
      body: JSON.stringify({ steps: [] }),
    });
    expect(invalid.status).toBe(400);
    expectShape(errorSchema, await invalid.json());
  });
});

describe("generated documents in docs/ (regenerate with npm run schema)", () => {
  it("docs/plan.schema.json is current with the zod schema", () => {
    expect(planSchemaFile).toEqual(planJsonSchema());
  });

  it("docs/openapi.json is the document a Worker serves, with the local server", async () => {
    const served = (await (await api("/openapi.json")).json()) as any;
    expect(openApiFile).toEqual({ ...served, servers: [LOCAL_SERVER] });
    expect(openApiFile).toEqual(openApiDocument(DEFAULT_MAX_STEPS));
  });
});
