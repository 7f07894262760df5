/**
 * `GET /v1/destinations` (SPEC 10) through the API, the typed client and the OpenAPI document:
 * every destination DESTINATIONS lists, in its order, with its limits as configured.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { destinationListSchema } from "../src/api/schemas";
import { EdgestepClient } from "../src/client/index.ts";
import { TEST_DESTINATIONS } from "./test-destinations";
import { api, unique } from "./helpers";

describe("GET /v1/destinations", () => {
  it("lists the configured destinations in order, with their limits as DESTINATIONS sets them", async () => {
    const res = await api("/v1/destinations");
    expect(res.status).toBe(200);
    const list = destinationListSchema.parse(await res.json());
    const configured = Object.entries(TEST_DESTINATIONS);
    expect(list.slice(0, configured.length).map((d) => [d.destination, d.limits])).toEqual(
      configured,
    );
    for (const d of list) {
      expect(d.inFlight).toBeGreaterThanOrEqual(0);
      expect(d.waiting).toBeGreaterThanOrEqual(0);
    }
  });

  it("takes no query: an unknown parameter is a 400 naming it", async () => {
    const res = await api("/v1/destinations?destination=x");
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.issues[0].path).toBe("query.destination");
  });

  it("is the same for every API key, and needs one when API_KEYS is set", async () => {
    const [a, b] = [unique("key"), unique("key")];
    const app = createApp();
    const keyed = { ...env, API_KEYS: `${a},${b}` };
    const get = (key?: string) =>
      app.fetch(
        new Request("http://edgestep.test/v1/destinations", {
          headers: key ? { authorization: `Bearer ${key}` } : {},
        }),
        keyed,
      );
    expect((await get()).status).toBe(401);
    const [ofA, ofB] = await Promise.all([get(a), get(b)]);
    const names = async (r: Response) =>
      ((await r.json()) as { destination: string }[]).map((d) => d.destination);
    expect(await names(ofA)).toEqual(await names(ofB));
  });

  it("a bad DESTINATIONS answers every request that needs it with a 500 naming it", async () => {
    const app = createApp();
    const broken = { ...env, DESTINATIONS: JSON.stringify({ "api.test": { concurrency: 0 } }) };
    const requests = [
      new Request("http://edgestep.test/v1/destinations"),
      new Request("http://edgestep.test/v1/plans/validate", {
        method: "POST",
        body: JSON.stringify({ steps: [{ tool: "pass" }] }),
      }),
    ];
    for (const request of requests) {
      const res = await app.fetch(request, broken);
      expect(res.status).toBe(500);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("misconfigured");
      expect(error.message).toMatch(/configuration is invalid: DESTINATIONS is invalid/);
      expect(error.message).toContain("concurrency");
    }
    // The typed client does not send it again: it stays wrong until the operator fixes it.
    const client = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: async (r) => app.fetch(r, broken),
    });
    const err = await client.listDestinations().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "misconfigured", status: 500, retryable: false });
  });

  it("the typed client reads it, and the OpenAPI document describes it", async () => {
    const client = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: (r) => exports.default.fetch(r),
    });
    const list = await client.listDestinations();
    expect(list[0]).toEqual({
      destination: "concurrency.upstream.test",
      limits: { concurrency: 2 },
      inFlight: expect.any(Number),
      waiting: expect.any(Number),
      pausedUntil: null,
    });
    const doc = (await (await api("/openapi.json")).json()) as any;
    const op = doc.paths["/v1/destinations"].get;
    expect(op.operationId).toBe("listDestinations");
    expect(op.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/DestinationList",
    });
    expect(doc.components.schemas.DestinationState.required).toEqual([
      "destination",
      "limits",
      "inFlight",
      "waiting",
      "pausedUntil",
    ]);
  });
});
