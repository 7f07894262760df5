import { describe, expect, it } from "vitest";
import planSchemaFile from "../docs/plan.schema.json";
import { createApp } from "../src/api/app";
import { planJsonSchema } from "../src/engine/plan-json-schema";
import { api } from "./helpers";

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
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "") || "/"}`);
    expect(served.length).toBeGreaterThan(10);
    for (const route of served) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method], route).toBeDefined();
    }
  });

  it("describes the plan body with the same schema that validates it", async () => {
    const doc = (await (await api("/openapi.json")).json()) as any;
    const body = doc.paths["/v1/runs"].post.requestBody.content["application/json"].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.config.properties.maxParallel).toMatchObject({ minimum: 1, maximum: 100 });
  });
});

describe("docs/plan.schema.json", () => {
  it("is current with the zod schema (regenerate with npm run schema)", () => {
    expect(planSchemaFile).toEqual(planJsonSchema());
  });
});
