/**
 * What `run --watch` and `get --watch` show: a live frame (progress bar with completed/total
 * and ETA, running steps, retries with their next attempt, what the run waits for) redrawn on
 * a terminal, and the summary it ends with. Pure: the status documents and `now` in, lines out.
 */
import { isFinal, type RunState, type RunSummary, type StepStatus } from "../../client/index.ts";
import { clock, duration, etaText, fit, someOf, stepError, when } from "./format.ts";

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan";
export type Paint = (style: Style, text: string) => string;
export const noPaint: Paint = (_, text) => text;

export interface WatchState {
  run: RunSummary;
  /** The run's steps that are running, retrying or waiting. */
  active: StepStatus[];
  /** When `run` was read (ms): the frame ages its elapsed time and ETA from there. */
  readAt: number;
}

const STATUS_STYLE: Record<RunState, Style> = {
  pending: "dim",
  running: "cyan",
  waiting: "yellow",
  paused: "yellow",
  completed: "green",
  partial: "yellow",
  failed: "red",
  cancelled: "dim",
};

/** The exit code of a watched run that ended: 0 only for `completed`. */
export function exitCodeOf(status: RunState): number {
  return status === "completed" ? 0 : 1;
}

export function progressBar(done: number, total: number, width: number): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${"█".repeat(filled)}${"░".repeat(width - filled)}]`;
}

/** The live frame: a few lines, each at most `width` characters. */
export function renderFrame(
  state: WatchState,
  now: number,
  width: number,
  paint = noPaint,
): string[] {
  const { run, active } = state;
  const { completedSteps, totalSteps, percentage } = run.progress;
  const age = isFinal(run.status) ? 0 : Math.max(0, now - state.readAt);
  const elapsedMs = run.progress.elapsedMs + (run.startedAt ? age : 0);
  const estimatedTimeRemainingMs = Math.max(0, run.progress.estimatedTimeRemainingMs - age);
  const title = `${run.runId}${run.name ? ` ${run.name}` : ""}`;
  const lines = [
    `${paint("bold", title)}  ${paint(STATUS_STYLE[run.status], run.status)}  ${duration(elapsedMs)}`,
    `${progressBar(completedSteps, totalSteps, Math.max(10, Math.min(30, width - 40)))} ` +
      `${completedSteps}/${totalSteps} ${Math.floor(percentage)}%` +
      etaText(run.status, estimatedTimeRemainingMs),
  ];
  const running = active.filter((s) => s.status === "running").map((s) => s.id);
  if (running.length > 0) lines.push(`running (${running.length}): ${someOf(running)}`);
  for (const step of active) {
    if (step.status === "retrying") lines.push(paint("yellow", retryLine(step, now)));
  }
  lines.push(...waitingLines(run, active, now).map((l) => paint("yellow", l)));
  return lines.map((line) => fit(line, width));
}

function retryLine(step: StepStatus, now: number): string {
  const next = step.nextAttemptAt ? ` at ${when(step.nextAttemptAt, now)}` : "";
  const after = step.error ? ` after ${stepError(step.error)}` : "";
  return `retrying ${step.id}: attempt ${step.attempts + 1}${next}${after}`;
}

/** What the run waits for, with the command that answers it. */
export function waitingLines(run: RunSummary, active: StepStatus[], now: number): string[] {
  const lines: string[] = [];
  for (const gate of run.pendingApproval ?? []) {
    lines.push(
      gate.gate === "risk"
        ? `waiting for approval (risk gate: ${someOf(gate.stepIds)}): edgestep approve ${run.runId}`
        : `waiting for approval of ${someOf(gate.stepIds)}: edgestep approve ${run.runId} --step ${gate.stepIds[0]}`,
    );
  }
  for (const repair of run.pendingReplan ?? []) {
    lines.push(
      `waiting for a repair of ${repair.stepId}: edgestep replan ${run.runId} --step ${repair.stepId} --steps <file> (or --give-up)`,
    );
  }
  const answered = new Set((run.pendingReplan ?? []).map((r) => r.stepId));
  const waiting = active.filter(
    (s) =>
      s.status === "waiting" &&
      s.waitingFor !== "approval" &&
      s.waitingFor !== "quota" &&
      !answered.has(s.id),
  );
  // Many steps may wait for their destinations' slots at once: one line for all of them.
  const quota = active.filter((s) => s.status === "waiting" && s.waitingFor === "quota");
  if (quota.length > 0)
    lines.push(`waiting for quota (${quota.length}): ${someOf(quota.map((s) => s.id))}`);
  for (const step of waiting) {
    const until = step.nextAttemptAt ? ` until ${when(step.nextAttemptAt, now)}` : "";
    lines.push(`waiting for ${step.waitingFor ?? "an answer"}: ${step.id}${until}`);
  }
  if (run.status === "paused") {
    lines.push(`paused after ${run.iterations} iterations: edgestep resume ${run.runId}`);
  }
  return lines;
}

/** The closing lines of a watched run: its outcome, counts, and what failed. */
export function renderSummary(run: RunSummary, failed: StepStatus[], paint = noPaint): string[] {
  const s = run.summary;
  const took =
    run.startedAt && run.endedAt
      ? ` in ${duration(Date.parse(run.endedAt) - Date.parse(run.startedAt))}`
      : "";
  const lines = [
    `${paint(STATUS_STYLE[run.status], paint("bold", `run ${run.status}`))}${took}: ${s.totalSteps} steps, ` +
      `${s.successfulSteps} succeeded, ${s.failedSteps} failed, ${s.skippedSteps} skipped, ${s.cancelledSteps} cancelled`,
  ];
  if (run.error) lines.push(paint("red", `run error: ${stepError(run.error)}`));
  for (const step of failed) {
    lines.push(paint("red", `failed ${step.id}${step.error ? `: ${stepError(step.error)}` : ""}`));
  }
  if (run.rollback)
    lines.push(`rollback ${run.rollback.state}: ${run.rollback.steps.length} compensations`);
  if (run.endedAt) lines.push(paint("dim", `ended ${clock(run.endedAt)}`));
  return lines;
}
