/**
 * The read-only views the run's RPCs answer with (SPEC 6): its status, one step, its
 * results and a page of its events, assembled from the checkpoint, the rollback and the
 * webhook outbox. Reads only: a GET never changes the run.
 */
import { FINAL_RUN_STATUSES, type RunRecord } from "../../src/engine/records";
import { attemptLog, runView, stepResult, stepView } from "../../src/engine/status";
import { rollbackView } from "../rollback/rollback";
import type { Checkpoint } from "../storage/checkpoint";
import type { WebhookOutbox } from "../webhooks/outbox";

/** `GET /v1/runs/:id`: the run, its steps (with forEach item counts) and what it waits for. */
export function statusView(c: Checkpoint, outbox: WebhookOutbox, run: RunRecord, now: number) {
  const plan = c.plan.read();
  const view = runView(run, plan, c.steps.all(), now);
  const items = c.items.counts();
  const waitingSteps = c.steps.waitingForApproval();
  const pendingApproval = [
    ...(run.riskGate ? [{ gate: "risk" as const, stepIds: run.riskGate }] : []),
    ...(waitingSteps.length > 0 ? [{ gate: "step" as const, stepIds: waitingSteps }] : []),
  ];
  const rolledBack = rollbackView(c);
  return {
    ...view,
    steps: view.steps.map((s) => (items.has(s.index) ? { ...s, items: items.get(s.index)! } : s)),
    ...(pendingApproval.length > 0 && { pendingApproval }),
    ...(rolledBack && { rollback: rolledBack }),
    ...(plan.webhook && { webhook: outbox.view(plan.webhook.url) }),
  };
}

/** `GET /v1/runs/:id/steps/:stepId`: one step with its result and every attempt; undefined for an unknown step. */
export function stepDetail(c: Checkpoint, stepId: string) {
  const index = c.steps.indexOf(stepId);
  if (index === undefined) return undefined;
  const record = c.steps.get(index)!;
  const items = c.items.counts(index).get(index);
  const { stepId: _, ...result } = stepResult(record, items?.total);
  return {
    ...stepView(record),
    ...(items && { items }),
    ...result,
    attemptLog: attemptLog(c.attempts.ofStep(index)),
  };
}

/** `GET /v1/runs/:id/results`: every step's result, in plan order. */
export function stepResults(c: Checkpoint) {
  const items = c.items.counts();
  return c.steps.all().map((s) => stepResult(s, items.get(s.index)?.total));
}

/** A page of `GET /v1/runs/:id/events`: `finished` (the run is final) lets a stream end once drained. */
export function eventPage(c: Checkpoint, run: RunRecord, after: number, limit: number) {
  return {
    events: c.events.after(after, limit),
    dropped: run.eventsDropped,
    finished: FINAL_RUN_STATUSES.has(run.status),
  };
}
