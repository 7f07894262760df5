/**
 * What follows when a run reaches a status users hear about (final, paused or waiting):
 * its events, the rollback of a failed run with `config.rollback`, and the `run.<status>`
 * webhook. Both the iteration and the control RPCs (cancel, risk gate) end up here, so the
 * consequences are the same whichever way the run got there.
 */
import type { RunStatus } from "../src/engine/records";
import { runView } from "../src/engine/status";
import type { RunState } from "./run-state";

/** Records the run's new status: events, a queued rollback, and the webhook to deliver. */
export function recordRunStatusChange(
  { store, rollback, outbox }: RunState,
  status: RunStatus,
  now: number,
): void {
  if (status === "paused")
    store.event("run_paused", now, null, null, { iterations: store.run()!.iterations });
  else if (status !== "waiting") {
    if (status === "cancelled") store.event("run_cancelled", now);
    const error = store.run()!.error; // a run-level failure (iteration_limit_exceeded) says why
    store.event("run_finished", now, null, null, {
      status,
      ...(error !== null && { error: JSON.parse(error) as unknown }),
    });
  }
  const plan = store.plan();
  if (status === "failed" && plan.config.rollback) rollback.enqueue(store);
  if (!plan.webhook) return;
  const run = store.run()!;
  const view = runView(run, plan, store.steps(), now);
  const payload = {
    runId: run.id,
    status,
    summary: view.summary,
    startedAt: view.startedAt,
    endedAt: view.endedAt,
  };
  outbox.enqueue(`run.${status}`, payload, now);
}
