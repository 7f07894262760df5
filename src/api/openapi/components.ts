/**
 * `components.schemas` of the OpenAPI document, generated from the zod schemas: request
 * bodies in their input shape (what a client writes: a defaulted field is optional), responses
 * in their output shape (what the Worker answers: a defaulted field is always there). Each
 * named schema is a component that the others and the operations `$ref`, never a copy.
 */
import { z } from "zod";
import {
  configSchema,
  planSchema,
  retrySchema,
  stepSchema,
  webhookSchema,
} from "../../engine/plan-schema.ts";
import * as api from "../schemas/index.ts";

type Registry = z.core.$ZodRegistry<{ id: string }>;
type JsonSchema = Record<string, unknown>;

export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function registry(schemas: Record<string, z.ZodType>): Registry {
  const r = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) r.add(schema, { id });
  return r;
}

/**
 * In input shapes a default becomes words in the description: generators such as
 * openapi-typescript make a property with a `default` required, which is right for what a
 * server answers and wrong for what a client writes.
 */
function defaultAsText({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (!("default" in jsonSchema)) return;
  const text = `Default: ${JSON.stringify(jsonSchema.default)}.`;
  delete jsonSchema.default;
  jsonSchema.description =
    typeof jsonSchema.description === "string" ? `${jsonSchema.description}. ${text}` : text;
}

function emit(r: Registry, io: "input" | "output"): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(r, {
    io,
    unrepresentable: "any",
    uri: (id) => ref(id).$ref,
    ...(io === "input" && { override: defaultAsText }),
  }) as { schemas: Record<string, JsonSchema> };
  // Each is a component of this document, not a standalone JSON Schema resource.
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return schemas;
}

/** `maxSteps`: the Worker's MAX_STEPS_PER_PLAN, so the Plan schema states the limit that applies. */
export function schemaComponents(maxSteps: number): Record<string, JsonSchema> {
  const requests = registry({
    Plan: planSchema(maxSteps),
    Step: stepSchema,
    PlanConfig: configSchema,
    RetryPolicy: retrySchema,
    Webhook: webhookSchema,
    ApproveRequest: api.approveBodySchema,
    ResumeRequest: api.resumeBodySchema,
    CallbackRequest: api.callbackBodySchema,
    ReplanRequest: api.replanBodySchema,
  });
  const responses = registry({
    Error: api.errorSchema,
    Issue: api.issueSchema,
    Health: api.healthSchema,
    RunCreated: api.runCreatedSchema,
    ValidateResult: api.validateResultSchema,
    ControlResult: api.controlResultSchema,
    CallbackResult: api.callbackResultSchema,
    RunStatus: api.runStatusSchema,
    RunSummary: api.runSummarySchema,
    StepStatus: api.stepStatusSchema,
    StepsPage: api.stepsPageSchema,
    StepDetail: api.stepDetailSchema,
    StepResult: api.stepResultSchema,
    RunPlan: api.runPlanSchema,
    Event: api.eventSchema,
    EventsPage: api.eventsPageSchema,
    RunList: api.runListSchema,
    RunListEntry: api.runListEntrySchema,
    Stats: api.statsSchema,
    DestinationList: api.destinationListSchema,
    DestinationState: api.destinationStateSchema,
    DestinationLimits: api.destinationLimitsSchema,
  });
  return { ...emit(requests, "input"), ...emit(responses, "output") };
}
