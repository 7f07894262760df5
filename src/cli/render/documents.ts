/** How `get`, `ls`, `stats`, `destinations` and `validate` read for a person. Pure: documents in, lines out. */
import type {
  DestinationState,
  RunList,
  RunSummary,
  Stats,
  StepStatus,
  ValidateResult,
} from "../../client/index.ts";
import { clock, duration, etaText, stepError, table, when } from "./format.ts";
import { waitingLines } from "./progress.ts";

function stepDetail(step: StepStatus): string {
  if (step.error) return stepError(step.error);
  if (step.reason) return step.reason;
  if (step.waitingFor) return `waiting for ${step.waitingFor}`;
  if (step.items) return `items ${step.items.succeeded}/${step.items.total}`;
  return "";
}

export function renderRun(run: RunSummary & { steps?: StepStatus[] }, now: number): string[] {
  const { progress: p, summary: s } = run;
  const times = [
    `created ${clock(run.createdAt)}`,
    run.startedAt && `started ${clock(run.startedAt)}`,
    run.endedAt && `ended ${clock(run.endedAt)}`,
    `elapsed ${duration(p.elapsedMs)}`,
  ].filter(Boolean);
  const lines = [
    `${run.runId}  ${run.status}${run.name ? `  ${run.name}` : ""}`,
    times.join("  "),
    `progress ${p.completedSteps}/${p.totalSteps} (${p.percentage}%)  succeeded ${s.successfulSteps}  ` +
      `failed ${s.failedSteps}  skipped ${s.skippedSteps}  cancelled ${s.cancelledSteps}` +
      etaText(run.status, p.estimatedTimeRemainingMs),
  ];
  if (run.error) lines.push(`run error: ${stepError(run.error)}`);
  lines.push(...waitingLines(run, run.steps ?? [], now));
  if (run.steps) {
    const rows = run.steps.map((step) => [
      step.id,
      step.tool,
      step.status,
      String(step.attempts),
      step.durationMs === null ? "" : duration(step.durationMs),
      stepDetail(step),
    ]);
    lines.push("", ...table(["STEP", "TOOL", "STATUS", "ATTEMPTS", "DURATION", "DETAIL"], rows));
  }
  return lines;
}

export function renderRunList(list: RunList): string[] {
  if (list.runs.length === 0) return ["no runs"];
  const rows = list.runs.map((run) => [
    run.runId,
    run.status,
    run.name ?? "",
    run.createdAt.replace("T", " ").slice(0, 19),
    `${run.progress.completedSteps}/${run.progress.totalSteps}`,
    Object.entries(run.tags)
      .map(([k, v]) => `${k}:${v}`)
      .join(" "),
  ]);
  return table(["RUN", "STATUS", "NAME", "CREATED (UTC)", "STEPS", "TAGS"], rows);
}

export function renderStats(stats: Stats): string[] {
  const rows = Object.entries(stats.byStatus).map(([status, n]) => [status, String(n)]);
  return [...table(["STATUS", "RUNS"], rows), `total ${stats.total}`];
}

export function renderDestinations(list: DestinationState[], now: number): string[] {
  if (list.length === 0)
    return ["no destinations (DESTINATIONS lists none, and none was paused lately)"];
  const limits = ({ concurrency, ratePerSecond, burst }: DestinationState["limits"]) =>
    [
      concurrency !== undefined && `${concurrency} at once`,
      ratePerSecond !== undefined && `${ratePerSecond}/s`,
      burst !== undefined && `burst ${burst}`,
    ]
      .filter(Boolean)
      .join(", ") || "none";
  const rows = list.map((d) => [
    d.destination,
    limits(d.limits),
    String(d.inFlight),
    String(d.waiting),
    d.pausedUntil === null ? "" : when(d.pausedUntil, now),
  ]);
  return table(["DESTINATION", "LIMITS", "IN FLIGHT", "WAITING", "PAUSED UNTIL"], rows);
}

export function renderValidation(result: ValidateResult): string[] {
  return [
    `valid: ${result.order.length} steps in ${result.levels.length} levels`,
    ...result.levels.map((level, i) => `  level ${i}: ${level.join(", ")}`),
    `critical path: ${result.criticalPath.join(" -> ")}`,
  ];
}
