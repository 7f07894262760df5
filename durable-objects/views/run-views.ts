/**
 * The read-only views the run's RPCs answer with (SPEC 6, 6.1): its status (summary or
 * full), a page of its steps, one step, its results and a page of its events, assembled
 * from the checkpoint, the rollback and the webhook outbox. Reads only: a GET never
 * changes the run.
 */
import type { StepStatus } from "../../src/engine/records";
import { planFeatures } from "../../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord, type StepViewRecord } from "../../src/engine/records";
import {
  attemptLog,
  runSummary,
  stepResult,
  stepResultJson,
  stepView,
} from "../../src/engine/status";
import { rollbackView } from "../rollback/rollback";
import type { Checkpoint } from "../storage/checkpoint";
import type { WebhookOutbox } from "../webhooks/outbox";
import { replanStatus } from "./replan-views";
import type { StepViews } from "./step-views";

/** `GET /v1/runs/:id?view=summary`: everything but the steps, in O(1) of the plan's size. */
export function summaryView(c: Checkpoint, outbox: WebhookOutbox, run: RunRecord, now: number) {
  const plan = c.plan.read();
  const waitingSteps = planFeatures(plan).approvals ? c.steps.waitingForApproval() : [];
  const pendingApproval = [
    ...(run.riskGate ? [{ gate: "risk" as const, stepIds: run.riskGate }] : []),
    ...(waitingSteps.length > 0 ? [{ gate: "step" as const, stepIds: waitingSteps }] : []),
  ];
  const rolledBack = rollbackView(c);
  return {
    ...runSummary(run, plan, now),
    ...(pendingApproval.length > 0 && { pendingApproval }),
    ...replanStatus(c),
    ...(rolledBack && { rollback: rolledBack }),
    ...(plan.webhook && { webhook: outbox.view(plan.webhook.url) }),
  };
}

/** `GET /v1/runs/:id` as JSON text: the summary and every step (with forEach item counts). */
export function statusText(
  c: Checkpoint,
  outbox: WebhookOutbox,
  steps: StepViews,
  run: RunRecord,
  now: number,
): string {
  const summary = JSON.stringify(summaryView(c, outbox, run, now));
  return `${summary.slice(0, -1)},"steps":${steps.text(c)}}`;
}

export interface StepsQuery {
  status?: readonly StepStatus[];
  after?: number;
  limit: number;
}

/** `GET /v1/runs/:id/steps`: a page of step entries in plan order; `next` is the last index when more follow. */
export function stepsPage(c: Checkpoint, query: StepsQuery) {
  const rows = c.steps.viewPage(query.status ?? null, query.after ?? -1, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const plan = c.plan.read();
  return {
    steps: page.map((s) => withItems(c, s, plan.steps[s.index]!.forEach !== undefined)),
    next: rows.length > query.limit ? page[page.length - 1]!.index : null,
  };
}

function withItems(c: Checkpoint, s: StepViewRecord, forEach: boolean) {
  const view = stepView(s);
  const items = forEach ? c.items.counts(s.index).get(s.index) : undefined;
  return items ? { ...view, items } : view;
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

/** What one page of results may hold: far under a Durable Object RPC's 32 MiB. */
const RESULTS_PAGE_BYTES = 4 * 1024 * 1024;
const RESULTS_PAGE_ROWS = 64;

/**
 * A page of `GET /v1/runs/:id/results` after step index `after`: the results' JSON texts,
 * comma-joined, up to about RESULTS_PAGE_BYTES (always at least one), and the `after` of the
 * next page, or null. The API streams the pages as one JSON array.
 */
export function resultsPage(c: Checkpoint, after: number) {
  const plan = c.plan.read();
  const parts: string[] = [];
  let bytes = 0;
  let last = after;
  for (;;) {
    const rows = c.steps.page(last, RESULTS_PAGE_ROWS);
    for (const s of rows) {
      if (parts.length > 0 && bytes >= RESULTS_PAGE_BYTES)
        return { json: parts.join(","), next: last };
      const total =
        plan.steps[s.index]!.forEach === undefined
          ? undefined
          : c.items.counts(s.index).get(s.index)?.total;
      const json = stepResultJson(s, total);
      parts.push(json);
      bytes += json.length;
      last = s.index;
    }
    if (rows.length < RESULTS_PAGE_ROWS) return { json: parts.join(","), next: null };
  }
}

/**
 * A page of `GET /v1/runs/:id/events`. `finished`: the run is final and no compensation is
 * left to run, so no step event will follow: a stream ends once drained. (A final run's
 * rollback still writes compensation events; webhook deliveries, retried for minutes, do not
 * hold a stream open.)
 */
export function eventPage(c: Checkpoint, run: RunRecord, after: number, limit: number) {
  return {
    events: c.events.after(after, limit),
    dropped: run.eventsDropped,
    finished: FINAL_RUN_STATUSES.has(run.status) && c.compensations.next() === undefined,
  };
}
