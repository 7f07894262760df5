/**
 * The API's shapes, as the console reads them. Routes the Worker serves today take their
 * types from the zod schemas that validate and document them (src/api/schemas.ts: type
 * imports only, nothing of zod reaches the browser). The listing routes (SPEC 8) are typed
 * here from the SPEC until their schemas exist.
 */
import type { z } from "zod";
import type {
  errorSchema,
  eventSchema,
  runCreatedSchema,
  runPlanSchema,
  runStatusSchema,
  stepDetailSchema,
  validateResultSchema,
} from "../../src/api/schemas";

/** `tags`: SPEC 8.1 adds them to the status (not in the schema yet). */
export type RunStatus = z.output<typeof runStatusSchema> & { tags?: Record<string, string> };
export type RunStatusName = RunStatus["status"];
export type StepStatus = RunStatus["steps"][number];
export type StepStatusName = StepStatus["status"];
export type StepDetail = z.output<typeof stepDetailSchema>;
type SchemaPlan = z.output<typeof runPlanSchema>["plan"];
/** `GET /v1/runs/:id/plan` names every step and lists all its dependencies by id. */
export type PlanStep = SchemaPlan["steps"][number] & { id: string; dependsOn: string[] };
export type PlanDocument = Omit<SchemaPlan, "steps"> & { steps: PlanStep[] };
export interface RunPlan {
  revision: number;
  plan: PlanDocument;
}
export type ValidateResult = z.output<typeof validateResultSchema>;
export type RunEvent = z.output<typeof eventSchema>;
export type RunCreated = z.output<typeof runCreatedSchema>;
export type ApiErrorBody = z.output<typeof errorSchema>["error"];
export type Issue = NonNullable<ApiErrorBody["issues"]>[number];

/** SPEC 8.2: one run in `GET /v1/runs`. */
export interface RunListEntry {
  runId: string;
  name: string | null;
  status: RunStatusName;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  tags: Record<string, string>;
  summary: RunStatus["summary"];
  progress: { completedSteps: number; totalSteps: number; percentage: number };
}

/** SPEC 8.2: `GET /v1/runs`. */
export interface RunList {
  runs: RunListEntry[];
  next: string | null;
}

/** SPEC 8.2: `GET /v1/stats`. */
export interface RunStats {
  total: number;
  byStatus: Partial<Record<RunStatusName, number>>;
}

/** Every run status, in lifecycle order (keys keep their order; one missing fails the typecheck). */
const ALL_STATUSES: Record<RunStatusName, true> = {
  pending: true,
  running: true,
  waiting: true,
  paused: true,
  completed: true,
  partial: true,
  failed: true,
  cancelled: true,
};
export const RUN_STATUSES = Object.keys(ALL_STATUSES) as RunStatusName[];

export const FINAL_STATUSES: ReadonlySet<RunStatusName> = new Set([
  "completed",
  "partial",
  "failed",
  "cancelled",
]);
