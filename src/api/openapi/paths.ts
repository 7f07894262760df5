/**
 * `paths` of the OpenAPI document: every route, with an `operationId` that the typed client
 * (src/client/) and generators use as the method's name. Bodies and responses `$ref` the
 * components of ./components.ts; query parameters come from the zod schemas routes validate
 * their queries with.
 */
import { z } from "zod";
import {
  eventsQuerySchema,
  listRunsQuerySchema,
  runQuerySchema,
  stepsQuerySchema,
} from "../schemas/index.ts";
import { ref } from "./components.ts";

type JsonSchema = Record<string, unknown>;

const json = (id: string) => ({ "application/json": { schema: ref(id) } });
const ok = (description: string, id: string) => ({ description, content: json(id) });
export const error = (description: string) => ({ description, content: json("Error") });
const body = (id: string, required = true) => ({ required, content: json(id) });

const notFound = error("no such run (or not yours)");
const conflict = error("not allowed in the run's current status");
const badRequest = error("a bad parameter or body: `issues` name it");
const tooLarge = error("body larger than its limit");
const indexUnavailable = {
  ...error(
    "unavailable: the caller's run index cannot be read right now (retry after Retry-After); " +
      "or auth_not_configured: the deployment requires API_KEYS and none is set",
  ),
  headers: { "Retry-After": { description: "seconds to wait", schema: { type: "integer" } } },
};

const runId = {
  name: "runId",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^run_[0-9a-f]{32}$" },
};

/** One query parameter per field of a route's query schema, in the shape a client sends. */
function queryParams(schema: z.ZodObject, repeated: string[] = []) {
  return Object.entries(schema.shape).map(([name, field]) => {
    const {
      $schema: _,
      description,
      ...fieldSchema
    } = z.toJSONSchema(field as z.ZodType, {
      io: "input",
      unrepresentable: "any",
    }) as JsonSchema;
    return {
      name,
      in: "query",
      required: false,
      ...(typeof description === "string" && { description }),
      schema: repeated.includes(name) ? { type: "array", items: { type: "string" } } : fieldSchema,
      ...(repeated.includes(name) && { style: "form", explode: true }),
    };
  });
}

export function paths() {
  const planBody = body("Plan");
  return {
    "/healthz": {
      get: {
        operationId: "getHealth",
        tags: ["service"],
        summary: "Liveness",
        security: [],
        responses: { 200: ok("the Worker answers", "Health") },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "getOpenApiDocument",
        tags: ["service"],
        summary: "This document",
        security: [],
        responses: {
          200: {
            description: "OpenAPI 3.1",
            content: { "application/json": { schema: { type: "object" } } },
          },
        },
      },
    },
    "/v1/plans/validate": {
      post: {
        operationId: "validatePlan",
        tags: ["plans"],
        summary: "Validate a plan without running it",
        requestBody: planBody,
        responses: {
          200: ok(
            "valid (with `warnings` for unknown step fields that were ignored)",
            "ValidateResult",
          ),
          400: error("invalid plan: `issues` name every problem"),
          413: error("plan larger than MAX_PLAN_BYTES"),
        },
      },
    },
    "/v1/runs": {
      post: {
        operationId: "createRun",
        tags: ["runs"],
        summary: "Submit a plan",
        parameters: [
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description: "a repeated POST with the same key answers the same run (200)",
            schema: { type: "string", minLength: 1, maxLength: 255 },
          },
        ],
        requestBody: planBody,
        responses: {
          202: {
            ...ok(
              "accepted (with `warnings` for unknown step fields that were ignored)",
              "RunCreated",
            ),
            headers: { Location: { description: "the status URL", schema: { type: "string" } } },
          },
          200: ok("the existing run of this Idempotency-Key", "RunCreated"),
          400: error("invalid plan: `issues` name every problem"),
          413: error("plan larger than MAX_PLAN_BYTES"),
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
      get: {
        operationId: "listRuns",
        tags: ["listing"],
        summary: "List the caller's runs, newest first (SPEC 8.2)",
        parameters: queryParams(listRunsQuerySchema, ["tag"]),
        responses: { 200: ok("a page of runs", "RunList"), 400: badRequest, 503: indexUnavailable },
      },
    },
    "/v1/stats": {
      get: {
        operationId: "getStats",
        tags: ["listing"],
        summary: "Count the caller's runs by status",
        responses: { 200: ok("counts", "Stats"), 503: indexUnavailable },
      },
    },
    ...runPaths(),
    "/v1/destinations": {
      get: {
        operationId: "listDestinations",
        tags: ["destinations"],
        summary:
          "Flow control per destination (SPEC 10): limits, calls in flight and waiting, pauses",
        responses: {
          200: ok("every listed destination, then unlisted ones paused lately", "DestinationList"),
        },
      },
    },
    "/v1/callbacks/{token}": {
      post: {
        operationId: "completeCallback",
        tags: ["callbacks"],
        summary: "Complete a callback step (no API key: the token is the credential)",
        security: [],
        parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" } }],
        requestBody: body("CallbackRequest"),
        responses: {
          200: ok("applied", "CallbackResult"),
          400: badRequest,
          404: error("unknown token"),
          409: error("token already used or expired"),
          413: tooLarge,
        },
      },
    },
  };
}

function runPaths() {
  const etag = {
    ETag: { description: "names this version of the document", schema: { type: "string" } },
  };
  return {
    "/v1/runs/{runId}": {
      get: {
        operationId: "getRun",
        tags: ["runs"],
        summary: "Run status (long poll with ?wait= and If-None-Match)",
        parameters: [
          runId,
          ...queryParams(runQuerySchema),
          {
            name: "If-None-Match",
            in: "header",
            required: false,
            description: "the ETag of the document the client has: 304 while it is current",
            schema: { type: "string" },
          },
        ],
        responses: {
          200: {
            description: "the status document (without `steps` with view=summary)",
            headers: etag,
            content: {
              "application/json": { schema: { oneOf: [ref("RunStatus"), ref("RunSummary")] } },
            },
          },
          304: {
            description: "not modified: If-None-Match names the current document",
            headers: etag,
          },
          400: badRequest,
          404: notFound,
        },
      },
      delete: {
        operationId: "deleteRun",
        tags: ["listing"],
        summary: "Delete a final run and everything it stored (SPEC 8.3)",
        parameters: [runId],
        responses: {
          204: { description: "deleted" },
          404: notFound,
          409: error("the run is not final: cancel it first"),
        },
      },
    },
    "/v1/runs/{runId}/steps": {
      get: {
        operationId: "listSteps",
        tags: ["runs"],
        summary: "A page of the run's step entries, in plan order, optionally by status",
        parameters: [runId, ...queryParams(stepsQuerySchema)],
        responses: { 200: ok("a page of steps", "StepsPage"), 400: badRequest, 404: notFound },
      },
    },
    "/v1/runs/{runId}/steps/{stepId}": {
      get: {
        operationId: "getStep",
        tags: ["runs"],
        summary: "One step: status, result and attempt log",
        parameters: [
          runId,
          { name: "stepId", in: "path", required: true, schema: { type: "string" } },
        ],
        responses: { 200: ok("the step", "StepDetail"), 404: notFound },
      },
    },
    "/v1/runs/{runId}/plan": {
      get: {
        operationId: "getRunPlan",
        tags: ["runs"],
        summary:
          "The plan the run executes: defaults filled in, every dependency in dependsOn, no secrets",
        parameters: [runId],
        responses: { 200: ok("the plan", "RunPlan"), 404: notFound },
      },
    },
    "/v1/runs/{runId}/results": {
      get: {
        operationId: "getResults",
        tags: ["runs"],
        summary: "Step results in plan order",
        parameters: [runId],
        responses: {
          200: {
            description: "results",
            content: {
              "application/json": { schema: { type: "array", items: ref("StepResult") } },
            },
          },
          404: notFound,
        },
      },
    },
    "/v1/runs/{runId}/events": {
      get: {
        operationId: "listEvents",
        tags: ["runs"],
        summary:
          "The event log: a page as JSON, or a live SSE stream with Accept: text/event-stream (resumes after Last-Event-ID)",
        parameters: [
          runId,
          ...queryParams(eventsQuerySchema),
          {
            name: "Last-Event-ID",
            in: "header",
            required: false,
            description: "SSE: resume after this seq",
            schema: { type: "string" },
          },
        ],
        responses: {
          200: {
            description: "events",
            content: { ...json("EventsPage"), "text/event-stream": { schema: { type: "string" } } },
          },
          204: {
            description: "SSE: the run is final and every event was sent (an EventSource stops)",
          },
          400: badRequest,
          404: notFound,
        },
      },
    },
    "/v1/runs/{runId}/cancel": control("cancelRun", "Cancel a run"),
    "/v1/runs/{runId}/resume": control(
      "resumeRun",
      "Continue a paused run",
      body("ResumeRequest", false),
    ),
    "/v1/runs/{runId}/approve": control(
      "approveRun",
      "Answer the risk gate, or an approval step",
      body("ApproveRequest"),
    ),
    "/v1/runs/{runId}/retry": control("retryRun", "Redrive a failed or partial run"),
    "/v1/runs/{runId}/replan": control(
      "replanRun",
      "Answer a step's pending repair (replan mode human): new steps, or give up",
      body("ReplanRequest"),
    ),
  };
}

function control(operationId: string, summary: string, requestBody?: ReturnType<typeof body>) {
  return {
    post: {
      operationId,
      tags: ["runs"],
      summary,
      parameters: [runId],
      ...(requestBody && { requestBody }),
      responses: {
        200: ok("the run's status after the change", "ControlResult"),
        ...(requestBody && { 400: badRequest, 413: tooLarge }),
        404: notFound,
        409: conflict,
      },
    },
  };
}
