/** The OpenAPI `paths` of one run's routes (`/v1/runs/{runId}...`): reads and controls. */
import { eventsQuerySchema, runQuerySchema, stepsQuerySchema } from "../schemas/index.ts";
import { ref } from "./components.ts";
import {
  badRequest,
  body,
  conflict,
  error,
  json,
  notFound,
  ok,
  queryParams,
  runId,
  tooLarge,
} from "./parts.ts";

export function runPaths() {
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
          400: badRequest,
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
        responses: { 200: ok("the step", "StepDetail"), 400: badRequest, 404: notFound },
      },
    },
    "/v1/runs/{runId}/plan": {
      get: {
        operationId: "getRunPlan",
        tags: ["runs"],
        summary:
          "The plan the run executes: defaults filled in, every dependency in dependsOn, no secrets",
        parameters: [runId],
        responses: { 200: ok("the plan", "RunPlan"), 400: badRequest, 404: notFound },
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
          400: badRequest,
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
        // A control without a body still refuses one that says something (400) or is too large.
        400: badRequest,
        413: tooLarge,
        404: notFound,
        409: conflict,
      },
    },
  };
}
