/** What a chaos run reports (the JSON of `npm run chaos -- --json`), and its summary lines. */
import type { ChaosOptions } from "./options.ts";
import { secs } from "./util.ts";

export interface KillRecord {
  n: number;
  /** Date.now() just before SIGKILL. */
  at: number;
  /** When every killed process was seen gone (a dying process may still send for a few ms after `at`). */
  goneAt: number;
  /** Since the server (re)started. */
  afterReadyMs: number;
  /** Upstream `/work` calls still unanswered at the kill. */
  inFlightCalls: number;
  /** Processes killed (wrangler's node and its workerd children, among others). */
  processes: string[];
  /** From SIGKILL until every process of the group was gone and the port refused connections. */
  downMs: number;
  /** From the restart until /healthz answered. */
  restartMs: number;
}

export interface Finding {
  runId: string;
  stepId?: string;
  problem: string;
  detail?: unknown;
}

export interface ChaosReport {
  ok: boolean;
  options: Omit<ChaosOptions, "log" | "afterKill">;
  runs: number;
  steps: number;
  succeededSteps: number;
  kills: KillRecord[];
  /** Runs not finished at the deadline (stuck: no alarm brought them back), or that vanished. */
  lost: Finding[];
  /**
   * Runs the last kill interrupted that made no progress during the quiet period and moved again
   * only once polled: their alarm did not survive the restart.
   */
  stuckUntilPolled: Finding[];
  /** Interrupted attempts retried during the chaos or quiet period, before any request touched their run again. */
  retriedByAlarm: number;
  /** Finished runs that did not end `completed`. */
  notCompleted: Finding[];
  /** Steps whose `data` is not the upstream's answer to that step, or whose call carried wrong input. */
  wrongData: Finding[];
  /** Upstream calls beyond the first for a key. */
  duplicates: number;
  duplicatesInFlightAtKill: number;
  /** Retries of an attempt the run recorded as failed for another reason (timeout, network...). */
  duplicatesAfterError: number;
  unexplained: Finding[];
  /** Runs missing from `GET /v1/runs`, listed twice, or listed with another status than their own (verify-listing.ts). */
  listing: Finding[];
  upstreamCalls: number;
  interruptedAttempts: number;
  /** Longest time between an interrupted call's answer and the kill that lost it (ms; negative: answered after). */
  maxAnswerToKillMs: number | null;
  timing: {
    totalMs: number;
    buildMs: number;
    startMs: number[];
    chaosMs: number;
    quietMs: number;
    drainMs: number;
    verifyMs: number;
  };
  stateDir: string | null;
  summary: string[];
}

/** The report in a few lines, then up to 10 of each kind of finding, then "chaos: OK" or "chaos: FAILED". */
export function summarize(r: ChaosReport): string[] {
  const dup =
    r.unexplained.length === 0
      ? r.duplicatesAfterError === 0
        ? `duplicate executions: ${r.duplicates} (all in flight at a kill)`
        : `duplicate executions: ${r.duplicates} (${r.duplicatesInFlightAtKill} in flight at a kill, ${r.duplicatesAfterError} retries after a recorded error)`
      : `duplicate executions: ${r.duplicates} (${r.duplicatesInFlightAtKill} in flight at a kill, ${r.duplicatesAfterError} retries after a recorded error), UNEXPLAINED: ${r.unexplained.length}`;
  const t = r.timing;
  const avgStart = t.startMs.reduce((a, b) => a + b, 0) / Math.max(1, t.startMs.length);
  const lines = [
    `runs: ${r.runs}, kills: ${r.kills.length}, lost: ${r.lost.length}, ${dup}`,
    `alarms after restarts: ${r.retriedByAlarm} of ${r.duplicatesInFlightAtKill} interrupted calls were retried before any request touched their run again; ` +
      `runs stuck until polled: ${r.stuckUntilPolled.length}`,
    `steps: ${r.steps} (${r.succeededSteps} succeeded), not completed: ${r.notCompleted.length}, wrong data: ${r.wrongData.length}, upstream calls: ${r.upstreamCalls}, interrupted attempts: ${r.interruptedAttempts}` +
      (r.maxAnswerToKillMs === null
        ? ""
        : `, latest answer before the kill that lost it: ${r.maxAnswerToKillMs} ms`),
    `listing: ${r.runs - new Set(r.listing.map((f) => f.runId)).size} of ${r.runs} runs listed once with their status; findings: ${r.listing.length}`,
    `time: ${secs(t.totalMs)} total (build ${secs(t.buildMs)}, chaos ${secs(t.chaosMs)}, quiet ${secs(t.quietMs)}, drain ${secs(t.drainMs)}, verify ${secs(t.verifyMs)}); ` +
      `wrangler dev ready in ${secs(avgStart)} on average over ${t.startMs.length} starts; seed ${r.options.seed}`,
    ...r.kills.map(
      (k) =>
        `  kill #${k.n}: ${secs(k.afterReadyMs)} after start, ${k.inFlightCalls} calls in flight, ${k.processes.length} processes (${k.processes.map((p) => p.split(" ")[1]).join(", ")}), down in ${k.downMs} ms, back in ${secs(k.restartMs)}`,
    ),
  ];
  const show = (label: string, list: Finding[]) => {
    for (const f of list.slice(0, 10))
      lines.push(
        `  ${label}: ${f.runId}${f.stepId ? ` step ${f.stepId}` : ""}: ${f.problem}${f.detail === undefined ? "" : ` ${JSON.stringify(f.detail)}`}`,
      );
    if (list.length > 10) lines.push(`  ... and ${list.length - 10} more ${label}`);
  };
  show("LOST", r.lost);
  show("STUCK UNTIL POLLED", r.stuckUntilPolled);
  show("NOT COMPLETED", r.notCompleted);
  show("WRONG DATA", r.wrongData);
  show("UNEXPLAINED", r.unexplained);
  show("LISTING", r.listing);
  if (r.stateDir) lines.push(`state and wrangler logs kept in ${r.stateDir}`);
  lines.push(r.ok ? "chaos: OK" : "chaos: FAILED");
  return lines;
}
