/**
 * `run --watch` and `get --watch`: follows a run until it is final. The SSE stream says when
 * something happened (and, off a terminal, each event is a line); the run's summary and its
 * active steps are then read again for the frame. Should the stream fail for good, it falls back
 * to long polling. Answers the final status for the caller's exit code. With --json it writes
 * nothing: the caller prints the final status document.
 */
import { isFinal, type EdgestepClient, type RunSummary, type StepStatus } from "../client/index.ts";
import type { Output } from "./output.ts";
import { describeEvent } from "./render/events.ts";
import { clock } from "./render/format.ts";
import { renderFrame, renderSummary, type WatchState } from "./render/progress.ts";

const ACTIVE = ["running", "retrying", "waiting"] as const;
/** Events a terminal keeps above the live frame: what went wrong, and what waits for someone. */
const KEPT_ON_TERMINAL = new Set([
  "step_failed",
  "step_retry_scheduled",
  "approval_requested",
  "approval_granted",
  "approval_denied",
  "run_paused",
  "run_resumed",
  "run_cancelled",
]);

/** Steps with one of `statuses`: from the document when it has them, else a page of them (SPEC 6.1). */
async function stepsWith(
  client: EdgestepClient,
  run: RunSummary & { steps?: StepStatus[] },
  statuses: readonly StepStatus["status"][],
): Promise<StepStatus[]> {
  if (run.steps) return run.steps.filter((s) => statuses.includes(s.status));
  return (await client.listSteps(run.runId, { status: statuses, limit: 50 })).steps;
}

async function readState(client: EdgestepClient, runId: string): Promise<WatchState> {
  const run = await client.getRunSummary(runId);
  const readAt = Date.now();
  return { run, active: await stepsWith(client, run, ACTIVE), readAt };
}

export async function watchRun(
  client: EdgestepClient,
  runId: string,
  out: Output,
): Promise<RunSummary> {
  let state = await readState(client, runId);
  const draw = () => out.frame(renderFrame(state, Date.now(), out.columns - 1, out.paint));
  let reading: Promise<void> | undefined;
  let again = false;
  /** Reads the state again, at most one read in flight (a burst of events makes one more read). */
  const refresh = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        state = await readState(client, runId);
        draw();
      } while (again);
    })().finally(() => (reading = undefined));
    return reading;
  };
  // Ctrl-C (or a SIGTERM, as `timeout` sends) leaves the run going, and the terminal as it
  // was: the cursor shown again. The exit code is the shell's for the signal. Listening before
  // the first frame hides the cursor, so that no signal can fall between the two.
  const interrupted = (signal: NodeJS.Signals) => {
    out.restore();
    process.exit(signal === "SIGTERM" ? 143 : 130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  draw();
  const ticker = out.isTTY ? setInterval(draw, 1000) : undefined;
  try {
    // A run that was over before the first read still gets its lines: the stream replays its log.
    if (!out.json || !isFinal(state.run.status)) await follow(client, runId, out, refresh, draw);
    await reading?.catch(() => {});
    state = await readState(client, runId);
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    clearInterval(ticker);
    out.clearFrame();
    out.restore();
  }
  // With --json the caller prints the final document instead.
  if (!out.json)
    out.lines(renderSummary(state.run, await stepsWith(client, state.run, ["failed"]), out.paint));
  return state.run;
}

async function follow(
  client: EdgestepClient,
  runId: string,
  out: Output,
  refresh: () => Promise<void>,
  draw: () => void,
): Promise<void> {
  try {
    for await (const event of client.events(runId)) {
      const line = describeEvent(event, runId);
      if (line !== null && !out.json && (!out.isTTY || KEPT_ON_TERMINAL.has(event.type))) {
        out.line(`${out.paint("dim", clock(event.at))} ${line}`);
        draw();
      }
      void refresh().catch(() => {});
    }
  } catch (err) {
    out.warn(
      `event stream lost (${err instanceof Error ? err.message : String(err)}); polling instead`,
    );
    await client.waitForRun(runId, { onUpdate: () => void refresh().catch(() => {}) });
  }
}
