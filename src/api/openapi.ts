/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this API, generated from the zod
 * schemas that validate requests and describe responses (the plan schema, src/api/schemas.ts,
 * src/api/schemas/listing.ts).
 * Tests check that every route the Worker serves is in it and that real responses parse
 * with its response schemas.
 */
import { z } from "zod";
import { planSchema } from "../engine/plan-schema";
import {
  approveBodySchema,
  callbackBodySchema,
  controlResultSchema,
  errorSchema,
  eventsPageSchema,
  eventsQuerySchema,
  resumeBodySchema,
  runCreatedSchema,
  runQuerySchema,
  runStatusSchema,
  stepDetailSchema,
  stepStatusSchema,
  stepsQuerySchema,
  stepResultSchema,
  validateResultSchema,
} from "./schemas";
import { listRunsQuerySchema, runListSchema, statsSchema } from "./schemas/listing";

type Schema = z.ZodType;

const json = (schema: Schema, io: "input" | "output" = "output") => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
};

const content = (schema: Schema, io: "input" | "output" = "output") => ({
  "application/json": { schema: json(schema, io) },
});

const error = (description: string) => ({ description, content: content(errorSchema) });

const runIdParam = {
  name: "runId",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^run_[0-9a-f]{32}$" },
};

function queryParams(schema: z.ZodObject) {
  return Object.entries(schema.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: false,
    schema: json(field as Schema, "input"),
  }));
}

type Operation = { security?: unknown[]; responses: Record<string, unknown> };

/**
 * Every operation under the bearer scheme may answer 401 (SPEC 6): declared once here
 * rather than in each route, so a new route cannot forget it.
 */
function withUnauthorized<T extends { paths: Record<string, Record<string, Operation>> }>(
  doc: T,
): T {
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (!path.startsWith("/v1/")) continue;
    for (const op of Object.values(operations)) {
      if (op.security?.length === 0) continue;
      op.responses[401] = error(
        "missing, malformed or unknown API key (only when API_KEYS is set)",
      );
    }
  }
  return doc;
}

const documents = new Map<number, ReturnType<typeof openApiDocument>>();

/** The document for a Worker whose plans may have at most `maxSteps` steps; built once per value. */
export function cachedOpenApiDocument(maxSteps: number) {
  let doc = documents.get(maxSteps);
  if (!doc) documents.set(maxSteps, (doc = openApiDocument(maxSteps)));
  return doc;
}

/** `maxSteps`: the Worker's MAX_STEPS_PER_PLAN, so the Plan schema states the limit that applies. */
export function openApiDocument(maxSteps: number) {
  const plan = planSchema(maxSteps);
  const planBody = { required: true, content: content(plan, "input") };
  const notFound = error("no such run (or not yours)");
  const conflict = error("not allowed in the run's current status");
  const tooLarge = error("body larger than its limit");
  return withUnauthorized({
    openapi: "3.1.0",
    info: {
      title: "edgestep",
      version: "1",
      description:
        "A durable plan executor on Cloudflare Workers. Bearer auth applies to /v1 routes when API_KEYS is set.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Plan: json(plan, "input"), Error: json(errorSchema) },
    },
    security: [{ bearer: [] }],
    paths: {
      "/healthz": {
        get: { summary: "Liveness", security: [], responses: { 200: { description: "ok" } } },
      },
      "/openapi.json": {
        get: {
          summary: "This document",
          security: [],
          responses: { 200: { description: "OpenAPI 3.1" } },
        },
      },
      "/v1/plans/validate": {
        post: {
          summary: "Validate a plan without running it",
          requestBody: planBody,
          responses: {
            200: { description: "valid", content: content(validateResultSchema) },
            400: error("invalid plan"),
            413: error("plan too large"),
          },
        },
      },
      "/v1/runs": {
        get: {
          summary:
            "List the caller's runs, newest first, by status, name, tags and creation time; paged by cursor",
          parameters: queryParams(listRunsQuerySchema),
          responses: {
            200: { description: "a page of runs", content: content(runListSchema) },
            400: error("bad query"),
          },
        },
        post: {
          summary: "Submit a plan",
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              schema: { type: "string", maxLength: 255 },
            },
          ],
          requestBody: planBody,
          responses: {
            202: { description: "accepted", content: content(runCreatedSchema) },
            200: {
              description: "an existing run for this Idempotency-Key",
              content: content(runCreatedSchema),
            },
            400: error("invalid plan"),
            413: error("plan too large"),
            429: {
              ...error("more runs created this minute than RUNS_PER_MINUTE allows"),
              headers: {
                "Retry-After": {
                  description: "seconds until the window resets",
                  schema: { type: "integer" },
                },
              },
            },
          },
        },
      },
      "/v1/runs/{runId}": {
        get: {
          summary:
            "Run status (view=summary: without steps); ETag, If-None-Match → 304, long poll with wait",
          parameters: [
            runIdParam,
            ...queryParams(runQuerySchema),
            { name: "If-None-Match", in: "header", schema: { type: "string" } },
          ],
          responses: {
            200: {
              description: "status (the full document, or without `steps` for view=summary)",
              headers: { ETag: { schema: { type: "string" } } },
              content: content(runStatusSchema),
            },
            304: { description: "unchanged since the ETag named by If-None-Match" },
            400: error("bad query"),
            404: notFound,
          },
        },
        delete: {
          summary:
            "Delete a finished run now: its data, its listing entry and its callback tokens (its id is never reused)",
          parameters: [runIdParam],
          responses: {
            204: { description: "deleted" },
            404: notFound,
            409: error("the run is not finished (cancel it first), or its rollback is running"),
          },
        },
      },
      "/v1/stats": {
        get: {
          summary: "The caller's runs, counted by status",
          responses: { 200: { description: "counts", content: content(statsSchema) } },
        },
      },
      "/v1/runs/{runId}/steps": {
        get: {
          summary: "A page of step entries, in plan order, optionally by status",
          parameters: [runIdParam, ...queryParams(stepsQuerySchema)],
          responses: {
            200: {
              description: "steps",
              content: content(
                z.strictObject({ steps: z.array(stepStatusSchema), next: z.int().nullable() }),
              ),
            },
            400: error("bad query"),
            404: notFound,
          },
        },
      },
      "/v1/runs/{runId}/steps/{stepId}": {
        get: {
          summary: "One step: status, result and attempt log",
          parameters: [
            runIdParam,
            { name: "stepId", in: "path", required: true, schema: { type: "string" } },
          ],
          responses: {
            200: { description: "step", content: content(stepDetailSchema) },
            404: notFound,
          },
        },
      },
      "/v1/runs/{runId}/results": {
        get: {
          summary: "Step results in plan order",
          parameters: [runIdParam],
          responses: {
            200: { description: "results", content: content(z.array(stepResultSchema)) },
            404: notFound,
          },
        },
      },
      "/v1/runs/{runId}/events": {
        get: {
          summary:
            "The event log: a page as JSON, or a live SSE stream with Accept: text/event-stream (resumes after Last-Event-ID)",
          parameters: [runIdParam, ...queryParams(eventsQuerySchema)],
          responses: {
            200: {
              description: "events",
              content: {
                ...content(eventsPageSchema),
                "text/event-stream": { schema: { type: "string" } },
              },
            },
            400: error("bad query"),
            404: notFound,
          },
        },
      },
      "/v1/runs/{runId}/cancel": {
        post: {
          summary: "Cancel a run",
          parameters: [runIdParam],
          responses: {
            200: { description: "cancelled", content: content(controlResultSchema) },
            404: notFound,
            409: conflict,
          },
        },
      },
      "/v1/runs/{runId}/resume": {
        post: {
          summary: "Continue a paused run",
          parameters: [runIdParam],
          requestBody: { required: false, content: content(resumeBodySchema, "input") },
          responses: {
            200: { description: "resumed", content: content(controlResultSchema) },
            400: error("bad body"),
            404: notFound,
            409: conflict,
            413: tooLarge,
          },
        },
      },
      "/v1/runs/{runId}/approve": {
        post: {
          summary: "Answer the risk gate, or an approval step",
          parameters: [runIdParam],
          requestBody: { required: true, content: content(approveBodySchema, "input") },
          responses: {
            200: { description: "answered", content: content(controlResultSchema) },
            400: error("bad body"),
            404: notFound,
            409: conflict,
            413: tooLarge,
          },
        },
      },
      "/v1/callbacks/{token}": {
        post: {
          summary: "Complete a callback step (no API key: the token is the credential)",
          security: [],
          parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { required: true, content: content(callbackBodySchema, "input") },
          responses: {
            200: {
              description: "applied",
              content: content(z.strictObject({ ok: z.literal(true) })),
            },
            400: error("bad body"),
            404: error("unknown token"),
            409: error("token already used or expired"),
            413: tooLarge,
          },
        },
      },
      "/v1/runs/{runId}/retry": {
        post: {
          summary: "Redrive a failed or partial run",
          parameters: [runIdParam],
          responses: {
            200: { description: "redriven", content: content(controlResultSchema) },
            404: notFound,
            409: conflict,
          },
        },
      },
    },
  });
}
