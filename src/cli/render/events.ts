/**
 * One line per event, for `logs` and for `--watch` when stdout is not a terminal (CI logs):
 * `14:03:07 step shipments failed: server_error (HTTP 503): ...`. Pure.
 */
import type { RunEvent } from "../../client/index.ts";
import { clock, duration, someOf, stepError, type StepErrorLike } from "./format.ts";

/** An event's `data`: its shape depends on its type (SPEC 6). */
type Data = Record<string, any>;

/** Events too frequent to be worth a line while watching. */
const QUIET = new Set(["iteration_started", "iteration_finished"]);

/** What an event says, or null for the ones a watcher does not need to see. */
export function describeEvent(event: RunEvent, runId: string): string | null {
  if (QUIET.has(event.type)) return null;
  const d = (event.data ?? {}) as Data;
  const step = `step ${event.stepId}`;
  switch (event.type) {
    case "run_started":
      return "run started";
    case "step_started":
      return d.forEach ? `${step} started (forEach)` : `${step} started (attempt ${event.attempt})`;
    case "step_succeeded":
      return `${step} succeeded${typeof d.executionMs === "number" ? ` (${duration(d.executionMs)})` : ""}`;
    case "step_failed":
      return `${step} failed: ${stepError(d as StepErrorLike)}`;
    case "step_retry_scheduled":
      return `${d.compensation ? `compensation of ${event.stepId}` : step} attempt ${event.attempt} failed: ${stepError(d as StepErrorLike)}; retry at ${clock(d.nextAttemptAt)}`;
    case "step_skipped":
      return `${step} skipped (${d.reason})`;
    case "step_waiting":
      return `${step} waiting for ${d.waitingFor}${d.until ? ` until ${clock(d.until)}` : ""}`;
    case "quota_wait": {
      const call = `${step}${d.item !== undefined ? ` item ${d.item}` : ""}${d.compensation ? " (compensation)" : ""}`;
      const why =
        d.reason === "paused" && d.pausedUntil
          ? `paused until ${clock(d.pausedUntil)}`
          : `queued${d.position ? ` #${d.position}` : ""}`;
      return `${call} waiting for quota at ${d.destination} (${why})`;
    }
    case "approval_requested":
      return d.gate === "risk"
        ? `approval requested (risk gate: ${someOf(d.stepIds ?? [])}): edgestep approve ${runId}`
        : `approval requested: edgestep approve ${runId} --step ${event.stepId}`;
    case "approval_granted":
    case "approval_denied":
      return (
        event.type.replace("_", " ") +
        (event.stepId ? ` for ${event.stepId}` : "") +
        (d.comment ? `: ${d.comment}` : "")
      );
    case "verification_failed":
      return `${step} failed verification: ${d.message}`;
    case "replan_requested":
      return d.mode === "human"
        ? `repair ${d.n} of ${event.stepId} requested: edgestep replan ${runId} --step ${event.stepId} --steps <file>`
        : `repair ${d.n} of ${event.stepId} requested from the planner`;
    case "replan_applied":
      return `repair ${d.n} of ${event.stepId} applied (plan revision ${d.revision}${d.newStepIds?.length ? `, new steps: ${someOf(d.newStepIds)}` : ""})`;
    case "replan_failed":
      return `repair${d.n ? ` ${d.n}` : ""} of ${event.stepId} failed: ${stepError(d as StepErrorLike)}`;
    case "run_paused":
      return `run paused after ${d.iterations} iterations: edgestep resume ${runId}`;
    case "run_resumed":
      // `steps` counts the steps run again.
      return d.redrive
        ? `run redriven: ${d.steps} step${d.steps === 1 ? "" : "s"} again`
        : "run resumed";
    case "run_finished":
      return `run finished: ${d.status}${d.error ? ` (${stepError(d.error)})` : ""}`;
    case "compensation_started":
      return `compensation of ${event.stepId} started`;
    case "compensation_finished":
      return `compensation of ${event.stepId} ${d.status ?? "finished"}`;
    case "webhook_delivered":
    case "webhook_failed":
      return `${event.type.replace("_", " ")}${d.status ? ` (HTTP ${d.status})` : ""}`;
    default:
      return `${event.type.replace(/_/g, " ")}${event.stepId ? ` ${event.stepId}` : ""}`;
  }
}

/** A line of `edgestep logs`: every event, with its seq and data. */
export function logLine(event: RunEvent): string {
  const parts = [clock(event.at), `#${event.seq}`, event.type];
  if (event.stepId !== undefined) parts.push(event.stepId);
  if (event.attempt !== undefined) parts.push(`attempt ${event.attempt}`);
  if (event.data !== undefined) parts.push(JSON.stringify(event.data));
  return parts.join("  ");
}
