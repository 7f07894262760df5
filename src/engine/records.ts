/** The stored checkpoint, as plain records (what the store reads and the views format). */
import type { ErrorCategory } from "./retry";

export type StepStatus =
  "pending" | "running" | "retrying" | "waiting" | "succeeded" | "failed" | "skipped" | "cancelled";

export type SkipReason =
  "dependency_failed" | "dependency_skipped" | "condition_false" | "skipped_by_user";

/**
 * What a `waiting` step waits for (SPEC 5.8): v1.1 adds `replan` (a repair, SPEC 9.2) and
 * `quota` (a slot of its destination, SPEC 10).
 */
export type WaitingFor = "approval" | "callback" | "timer" | "replan" | "quota";

export type FinalStatus = "completed" | "partial" | "failed" | "cancelled";

export const FINISHED: ReadonlySet<StepStatus> = new Set([
  "succeeded",
  "failed",
  "skipped",
  "cancelled",
]);

/** Run statuses (SPEC 5.8), in lifecycle order. */
export const RUN_STATUSES = [
  "pending",
  "running",
  "waiting",
  "paused",
  "completed",
  "partial",
  "failed",
  "cancelled",
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set([
  "completed",
  "partial",
  "failed",
  "cancelled",
]);

export interface RunRecord {
  id: string;
  owner: string;
  status: RunStatus;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  iterations: number;
  /** Bounded mode: the run pauses when `iterations` reaches it. */
  iterationBudget: number | null;
  /** Step ids awaiting the risk gate (SPEC 5.4), while it is unanswered. */
  riskGate: readonly string[] | null;
  baseUrl: string | null;
  eventsDropped: number;
  /** JSON of `{ category, message }` when the run itself failed (e.g. iteration limit). */
  error: string | null;
  /** When the run's deletion began (SPEC 8.3), or null: a run being deleted reads as gone. */
  deleteRequestedAt: number | null;
  /** Grows with every change a status document shows: its ETag (SPEC 6.1). */
  version: number;
  /** The steps by status, kept as they change, so a status read costs O(1). */
  counts: StepCounts;
}

/** What the run's status shows of its steps without reading them (see `countSteps`). */
export interface StepCounts {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  cancelled: number;
  running: number;
  /** Over succeeded and failed steps with both times: their summed duration, and how many. */
  durationSum: number;
  durationCount: number;
}

export interface StepError {
  category: ErrorCategory | "iteration_limit_exceeded";
  message: string;
  status?: number;
}

export interface StepRecord {
  index: number;
  id: string;
  tool: string;
  status: StepStatus;
  reason: SkipReason | null;
  attempts: number;
  startedAt: number | null;
  endedAt: number | null;
  nextAttemptAt: number | null;
  waitingFor: WaitingFor | null;
  /** JSON text of the step's output, when it succeeded. */
  data: string | null;
  /** JSON text of a StepError. */
  error: string | null;
  httpStatus: number | null;
  executionMs: number | null;
}

/**
 * What a step's entry shows (the full status's `steps`, a page of steps): its row without the
 * result, which can be large and is read only where it is shown (a step's detail, results).
 */
export type StepViewRecord = Omit<StepRecord, "data" | "httpStatus" | "executionMs">;

export interface AttemptRecord {
  attempt: number;
  /** The forEach item the attempt served, or -1. */
  itemIndex: number;
  startedAt: number;
  endedAt: number | null;
  category: ErrorCategory | null;
  httpStatus: number | null;
  message: string | null;
}

export interface EventRecord {
  seq: number;
  type: string;
  at: number;
  stepId: string | null;
  attempt: number | null;
  data: string | null;
}
