/**
 * The client's request and response types, derived from the zod schemas the Worker validates
 * with and builds its OpenAPI document from (src/api/schemas/, src/engine/plan-schema.ts):
 * requests in their input shape (what a caller writes), responses in their output shape (what
 * the Worker answers). Type-only imports: the client carries no zod at run time.
 */
import type { z } from "zod";
import type * as api from "../api/schemas/index.ts";
import type { PlanInput } from "../engine/plan-schema.ts";

/** A plan as a user writes it (SPEC 2): defaulted fields are optional. */
export type Plan = PlanInput;

export type Issue = z.output<typeof api.issueSchema>;
export type ErrorBody = z.output<typeof api.errorSchema>;
export type Health = z.output<typeof api.healthSchema>;
export type RunCreated = z.output<typeof api.runCreatedSchema>;
export type ValidateResult = z.output<typeof api.validateResultSchema>;
export type ControlResult = z.output<typeof api.controlResultSchema>;
export type CallbackResult = z.output<typeof api.callbackResultSchema>;
export type RunStatus = z.output<typeof api.runStatusSchema>;
export type RunSummary = z.output<typeof api.runSummarySchema>;
export type StepStatus = z.output<typeof api.stepStatusSchema>;
export type StepDetail = z.output<typeof api.stepDetailSchema>;
export type StepResult = z.output<typeof api.stepResultSchema>;
export type StepsPage = z.output<typeof api.stepsPageSchema>;
export type RunPlan = z.output<typeof api.runPlanSchema>;
export type RunEvent = z.output<typeof api.eventSchema>;
export type EventsPage = z.output<typeof api.eventsPageSchema>;
export type RunList = z.output<typeof api.runListSchema>;
export type RunListEntry = z.output<typeof api.runListEntrySchema>;
export type Stats = z.output<typeof api.statsSchema>;
export type DestinationState = z.output<typeof api.destinationStateSchema>;

/** A run's status: `pending` ... `cancelled` (SPEC 5.8). */
export type RunState = RunStatus["status"];
/** A step's status: `pending` ... `cancelled` (SPEC 5.8). */
export type StepState = StepStatus["status"];

export type ApproveRequest = z.input<typeof api.approveBodySchema>;
export type ResumeRequest = z.input<typeof api.resumeBodySchema>;
export type CallbackRequest = z.input<typeof api.callbackBodySchema>;
export type ReplanRequest = z.input<typeof api.replanBodySchema>;

type OneOrMany<T> = T | readonly T[];
type ListRunsQuery = z.output<typeof api.listRunsQuerySchema>;
type StepsQuery = z.output<typeof api.stepsQuerySchema>;
type EventsQuery = z.output<typeof api.eventsQuerySchema>;
type RunQuery = z.output<typeof api.runQuerySchema>;

/** `GET /v1/runs` filters (SPEC 8.2); the client writes them as the query the Worker parses. */
export interface ListRunsOptions {
  status?: OneOrMany<NonNullable<ListRunsQuery["status"]>[number]>;
  name?: ListRunsQuery["name"];
  /** Every tag must match: `{ team: "payments" }` is `tag=team:payments`. */
  tag?: Record<string, string>;
  /** Exclusive bounds on `createdAt`. */
  createdAfter?: Date | string;
  createdBefore?: Date | string;
  limit?: ListRunsQuery["limit"];
  cursor?: ListRunsQuery["cursor"];
}

/** `GET /v1/runs/:runId/steps` (SPEC 6.1). */
export interface ListStepsOptions {
  status?: OneOrMany<NonNullable<StepsQuery["status"]>[number]>;
  after?: StepsQuery["after"];
  limit?: StepsQuery["limit"];
}

/** `GET /v1/runs/:runId/events` as JSON pages. */
export type ListEventsOptions = Partial<EventsQuery>;

/** `GET /v1/runs/:runId` as a conditional read or long poll (SPEC 6.1). */
export interface PollRunOptions {
  view?: RunQuery["view"];
  /** Long poll: answer when the document changes, at the latest after this many ms. */
  wait?: RunQuery["wait"];
  /** The ETag of the document the caller has. */
  etag?: string | null;
  signal?: AbortSignal;
}

export type PollResult<T> =
  { changed: true; etag: string | null; run: T } | { changed: false; etag: string | null };
