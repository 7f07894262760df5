/**
 * What follows when a run reaches a status users hear about (final, paused or waiting):
 * its events, the rollback of a failed run with `config.rollback`, and the `run.<status>`
 * webhook. Both the iteration and the control RPCs (cancel, risk gate) end up here, so the
 * consequences are the same whichever way the run got there.
 */
import type { RunStatus } from "../../src/engine/records";
import { runSummary } from "../../src/engine/status";
import { enqueueRollback } from "../rollback/rollback";
import type { Checkpoint } from "../storage/checkpoint";
import type { WebhookOutbox } from "../webhooks/outbox";

/** Records the run's new status: events, a queued rollback, and the webhook to deliver. */
export function recordStatusChange(
  c: Checkpoint,
  outbox: WebhookOutbox,
  status: RunStatus,
  now: number,
): void {
  const run = c.run.read()!;
  if (status === "paused")
    c.events.append("run_paused", now, null, null, { iterations: run.iterations });
  else if (status !== "waiting") {
    if (status === "cancelled") c.events.append("run_cancelled", now);
    const error = run.error; // a run-level failure (iteration_limit_exceeded) says why
    c.events.append("run_finished", now, null, null, {
      status,
      ...(error !== null && { error: JSON.parse(error) as unknown }),
    });
  }
  const plan = c.plan.read();
  if (status === "failed" && plan.config.rollback) enqueueRollback(c);
  if (!plan.webhook) return;
  const view = runSummary(run, plan, now);
  const payload = {
    runId: run.id,
    status,
    summary: view.summary,
    startedAt: view.startedAt,
    endedAt: view.endedAt,
  };
  outbox.enqueue(`run.${status}`, payload, now);
}
