/**
 * The read-only views the run's RPCs answer with (SPEC 6): its status, one step, its
 * results and a page of its events, assembled from the checkpoint, the rollback and the
 * webhook outbox. Reads only: a GET never changes the run.
 */
import type { CompiledPlan } from "../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord } from "../src/engine/records";
import { attemptLog, runView, stepResult, stepView } from "../src/engine/status";
import type { RunState } from "./run-state";
import type { RunStore } from "./store";

/** `GET /v1/runs/:id`: the run, its steps (with forEach item counts) and what it waits for. */
export function statusView({ store, rollback, outbox }: RunState, run: RunRecord, now: number) {
  const plan = store.plan();
  const view = runView(run, plan, store.steps(), now);
  const items = store.itemCounts();
  const waitingSteps = store.waitingForApproval();
  const pendingApproval = [
    ...(run.riskGate ? [{ gate: "risk" as const, stepIds: run.riskGate }] : []),
    ...(waitingSteps.length > 0 ? [{ gate: "step" as const, stepIds: waitingSteps }] : []),
  ];
  const rolledBack = rollback.view();
  return {
    ...view,
    steps: view.steps.map((s) => (items.has(s.index) ? { ...s, items: items.get(s.index)! } : s)),
    ...(pendingApproval.length > 0 && { pendingApproval }),
    ...(rolledBack && { rollback: rolledBack }),
    ...(plan.webhook && { webhook: outbox.view(plan.webhook.url) }),
  };
}

/** `GET /v1/runs/:id/steps/:stepId`: one step with its result and every attempt; undefined for an unknown step. */
export function stepDetail(store: RunStore, stepId: string) {
  const index = store.stepIndex(stepId);
  if (index === undefined) return undefined;
  const record = store.step(index)!;
  const items = store.itemCounts(index).get(index);
  const { stepId: _, ...result } = stepResult(record, items?.total);
  return {
    ...stepView(record),
    ...(items && { items }),
    ...result,
    attemptLog: attemptLog(store.attempts(index)),
  };
}

/** `GET /v1/runs/:id/results`: every step's result, in plan order. */
export function stepResults(store: RunStore) {
  const items = store.itemCounts();
  return store.steps().map((s) => stepResult(s, items.get(s.index)?.total));
}

/** A page of `GET /v1/runs/:id/events`: `finished` (the run is final) lets a stream end once drained. */
export function eventPage(store: RunStore, run: RunRecord, after: number, limit: number) {
  return {
    events: store.events(after, limit),
    dropped: run.eventsDropped,
    finished: FINAL_RUN_STATUSES.has(run.status),
  };
}

/** Header values a plan sets by hand (a token in an `http` step's headers) never leave the run. */
function withoutHeaderValues(params: Record<string, unknown>): Record<string, unknown> {
  const headers = params.headers;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return params;
  return {
    ...params,
    headers: Object.fromEntries(Object.keys(headers).map((name) => [name, "[redacted]"])),
  };
}

/**
 * `GET /v1/runs/:id/plan`: the plan the run executes, as a plan document with every default
 * filled in and every dependency (explicit and from templates) in `dependsOn`, by id. Its
 * `revision` counts the repairs applied to it (SPEC 9.2; 0 until replanning exists). The
 * webhook's secret and header values are left out: the console draws the DAG from this.
 */
export function planView(plan: CompiledPlan) {
  const ids = plan.steps.map((s) => s.id);
  return {
    revision: 0,
    plan: {
      ...(plan.name !== null && { name: plan.name }),
      ...(plan.input !== null && plan.input !== undefined && { input: plan.input }),
      config: plan.config,
      ...(plan.webhook && { webhook: { url: plan.webhook.url } }),
      steps: plan.steps.map((s) => ({
        id: s.id,
        tool: s.tool,
        params: withoutHeaderValues(s.params),
        dependsOn: s.deps.map((d) => ids[d]!),
        ...(s.when !== undefined && { when: s.when }),
        trigger: s.trigger,
        retry: s.retry,
        timeoutMs: s.timeoutMs,
        onFailure: s.onFailure,
        ...(s.risk !== undefined && { risk: s.risk }),
        ...(s.readonly !== undefined && { readonly: s.readonly }),
        ...(s.forEach !== undefined && { forEach: s.forEach }),
        ...(s.maxConcurrency !== undefined && { maxConcurrency: s.maxConcurrency }),
        ...(s.compensate && {
          compensate: { tool: s.compensate.tool, params: withoutHeaderValues(s.compensate.params) },
        }),
      })),
    },
  };
}
