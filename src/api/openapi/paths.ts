/**
 * `paths` of the OpenAPI document: every route, with an `operationId` that the typed client
 * (src/client/) and generators use as the method's name. Bodies and responses `$ref` the
 * components of ./components.ts (parts.ts); a run's own routes are in run-paths.ts.
 */
import { listRunsQuerySchema } from "../schemas/index.ts";
import { badRequest, body, error, indexUnavailable, ok, queryParams, tooLarge } from "./parts.ts";
import { runPaths } from "./run-paths.ts";

/** Both answers of `POST /v1/runs` point at the run. */
const location = { Location: { description: "the status URL", schema: { type: "string" } } };

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
            headers: location,
          },
          200: {
            ...ok("the existing run of this Idempotency-Key", "RunCreated"),
            headers: location,
          },
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
        responses: { 200: ok("counts", "Stats"), 400: badRequest, 503: indexUnavailable },
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
          400: badRequest,
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
