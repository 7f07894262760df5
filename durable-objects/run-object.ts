/**
 * RunObject: one Durable Object per run. A thin shell: it stores the checkpoint in
 * SQLite (RunStore), runs iterations, compensations and webhook deliveries from
 * `alarm()`, and answers the API over RPC. Every method checks the caller owns the run;
 * a stranger sees nothing.
 *
 * SQLite is the truth; the alarm is a pointer: every change ends with `rearm()`, which
 * points the alarm at the earliest due row, and `alarm()` is safe to run twice.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env } from "../src/env";
import { riskGateSteps } from "../src/engine/approval";
import type { CompiledPlan } from "../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord, type RunStatus } from "../src/engine/records";
import { attemptLog, runView, stepResult, stepView, type StepResult } from "../src/engine/status";
import { commitAnswer, type Answer } from "./answers";
import { CallbackStore, type CallbackAnswer } from "./callback-store";
import { Iteration, LEASE_MS } from "./iteration";
import { Rollback } from "./rollback";
import { Sql } from "./sql";
import { RunStore } from "./store";
import { WebhookOutbox } from "./webhook-outbox";

export type CreateOutcome = { created: boolean; status: string };
/** `null`: no such run (404); `ok: false`: not allowed in the run's state (409). */
export type ControlOutcome =
  { ok: true; status: string } | { ok: false; status: string; message: string } | null;
export interface ApproveRequest {
  approved: boolean;
  skipSteps?: string[];
  stepId?: string;
  comment?: string;
}
/** `invalid`: the request names something that does not exist or does not apply (400; `field`: the body field). */
export type ApproveOutcome =
  ControlOutcome | { ok: false; invalid: true; message: string; field?: string };

/** Statuses whose alarm runs iterations (a `waiting` run may have timeouts due). */
const ACTIVE: ReadonlySet<RunStatus> = new Set(["pending", "running", "waiting"]);

export class RunObject extends DurableObject<Env> {
  private readonly store: RunStore;
  private readonly db: Sql;
  private readonly callbacks: CallbackStore;
  private readonly outbox: WebhookOutbox;
  private readonly rollback: Rollback;
  private readonly resultCache = new Map<number, StepResult>();
  private iteration: Iteration | undefined;
  private iterationDone: Promise<number | null> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RunStore(ctx.storage, settings(env).maxEventsPerRun);
    this.db = new Sql(ctx.storage.sql);
    this.callbacks = new CallbackStore(this.db);
    this.rollback = new Rollback(this.db, () => this.store.plan());
    const config = settings(env);
    this.outbox = new WebhookOutbox(this.db, {
      fetcher: (r) => fetch(r),
      allowedHosts: config.allowedHosts,
      maxAttempts: config.webhookMaxAttempts,
      event: (type, now, data) => this.store.event(type, now, null, null, data),
    });
  }

  /** Stores a new run and arms its first iteration (or waits at the risk gate). Idempotent. */
  async create(
    runId: string,
    owner: string,
    plan: CompiledPlan,
    baseUrl: string,
  ): Promise<CreateOutcome> {
    const existing = this.store.run();
    if (existing) return { created: false, status: existing.status };
    const now = Date.now();
    const gate = riskGateSteps(plan);
    this.store.createRun(runId, owner, plan, now, baseUrl, gate);
    if (gate.length > 0) {
      this.store.event("approval_requested", now, null, null, { gate: "risk", stepIds: gate });
      this.runStatusChanged("waiting", now);
      await this.rearm();
      return { created: true, status: "waiting" };
    }
    await this.ctx.storage.setAlarm(now);
    return { created: true, status: "pending" };
  }

  /** The run's status if it exists and is the caller's, else null: lets a retried idempotent POST skip the rate limit. */
  async existingStatus(owner: string): Promise<string | null> {
    return this.owned(owner)?.status ?? null;
  }

  async status(owner: string) {
    const run = this.owned(owner);
    if (!run) return null;
    const plan = this.store.plan();
    const view = runView(run, plan, this.store.steps(), Date.now());
    const items = this.store.itemCounts();
    const pendingApproval = [
      ...(run.riskGate ? [{ gate: "risk" as const, stepIds: run.riskGate }] : []),
      ...(this.store.waitingForApproval().length > 0
        ? [{ gate: "step" as const, stepIds: this.store.waitingForApproval() }]
        : []),
    ];
    const rollback = this.rollback.view();
    return {
      ...view,
      steps: view.steps.map((s) => (items.has(s.index) ? { ...s, items: items.get(s.index)! } : s)),
      ...(pendingApproval.length > 0 && { pendingApproval }),
      ...(rollback && { rollback }),
      ...(plan.webhook && { webhook: this.outbox.view(plan.webhook.url) }),
    };
  }

  async step(owner: string, stepId: string) {
    if (!this.owned(owner)) return null;
    const index = this.store.stepIndex(stepId);
    if (index === undefined) return undefined;
    const record = this.store.step(index)!;
    const items = this.store.itemCounts(index).get(index);
    const { stepId: _, ...result } = stepResult(record, items?.total);
    return {
      ...stepView(record),
      ...(items && { items }),
      ...result,
      attemptLog: attemptLog(this.store.attempts(index)),
    };
  }

  async results(owner: string) {
    if (!this.owned(owner)) return null;
    const items = this.store.itemCounts();
    return this.store.steps().map((s) => stepResult(s, items.get(s.index)?.total));
  }

  async events(owner: string, after: number, limit: number) {
    const run = this.owned(owner);
    if (!run) return null;
    return {
      events: this.store.events(after, limit),
      dropped: run.eventsDropped,
      finished: FINAL_RUN_STATUSES.has(run.status),
    };
  }

  async cancel(owner: string): Promise<ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    if (run.status === "cancelled") return { ok: true, status: "cancelled" };
    if (FINAL_RUN_STATUSES.has(run.status)) {
      return { ok: false, status: run.status, message: `the run already ended as ${run.status}` };
    }
    if (this.iteration) {
      this.iteration.cancel();
      await this.iterationDone;
    } else this.cancelNow(Date.now());
    await this.rearm();
    return { ok: true, status: this.store.run()!.status };
  }

  /** Continues a paused (bounded) run with `iterations` more iterations. */
  async resume(owner: string, iterations: number | undefined): Promise<ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    if (run.status !== "paused")
      return {
        ok: false,
        status: run.status,
        message: `only a paused run can resume; this one is ${run.status}`,
      };
    const mode = this.store.plan().config.mode;
    const more = iterations ?? (mode.type === "bounded" ? mode.iterations : 1);
    const now = Date.now();
    this.store.resume(run.iterations + more, now);
    await this.rearm(now);
    return { ok: true, status: "running" };
  }

  /** Redrive: re-runs failed steps and the steps skipped or cancelled because of them. */
  async redrive(owner: string): Promise<ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    if (run.status !== "failed" && run.status !== "partial") {
      return {
        ok: false,
        status: run.status,
        message: `only a failed or partial run can be retried; this one is ${run.status}`,
      };
    }
    // Redrive keeps succeeded results; after a rollback undid them, they no longer hold.
    if (this.rollback.queued()) {
      return {
        ok: false,
        status: run.status,
        message:
          "this run was rolled back (config.rollback): its completed steps were undone, so submit the plan again instead of retrying",
      };
    }
    const now = Date.now();
    this.store.redrive(now);
    this.resultCache.clear();
    await this.rearm(now);
    return { ok: true, status: "pending" };
  }

  /** Answers the risk gate, or an `approval` step (SPEC 5.4). */
  async approve(owner: string, request: ApproveRequest): Promise<ApproveOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const now = Date.now();
    if (run.riskGate && request.stepId === undefined) {
      const unknown = (request.skipSteps ?? []).filter(
        (id) => this.store.stepIndex(id) === undefined,
      );
      if (unknown.length > 0)
        return {
          ok: false,
          invalid: true,
          field: "skipSteps",
          message: `skipSteps: unknown step(s) ${unknown.join(", ")}`,
        };
      if (!request.approved) {
        this.store.event("approval_denied", now, null, null, {
          gate: "risk",
          ...(request.comment && { comment: request.comment }),
        });
        this.cancelNow(now);
        await this.rearm();
        return { ok: true, status: "cancelled" };
      }
      this.store.event("approval_granted", now, null, null, {
        gate: "risk",
        skipSteps: request.skipSteps ?? [],
      });
      this.store.openRiskGate(request.skipSteps ?? [], now);
      await this.rearm(now);
      return { ok: true, status: "pending" };
    }
    const waiting = this.store.waitingForApproval();
    const stepId = request.stepId ?? (waiting.length === 1 ? waiting[0] : undefined);
    if (stepId === undefined) {
      const message =
        waiting.length > 1
          ? `several steps wait for approval (${waiting.join(", ")}): name one in stepId`
          : "nothing waits for approval";
      return waiting.length > 1
        ? { ok: false, invalid: true, message }
        : { ok: false, status: run.status, message };
    }
    if (this.store.stepIndex(stepId) === undefined)
      return { ok: false, invalid: true, message: `unknown step "${stepId}"` };
    if (!waiting.includes(stepId))
      return {
        ok: false,
        status: run.status,
        message: `step "${stepId}" is not waiting for approval`,
      };
    // Only the risk gate skips steps: ignoring skipSteps here would run steps the caller meant to skip.
    if (request.skipSteps !== undefined && request.skipSteps.length > 0) {
      return {
        ok: false,
        invalid: true,
        field: "skipSteps",
        message: `skipSteps: only the risk gate takes skipSteps; approval step "${stepId}" is answered with approved (and comment)`,
      };
    }
    await this.applyAnswer(this.store.stepIndex(stepId)!, {
      type: "approval",
      approved: request.approved,
      ...(request.comment && { comment: request.comment }),
    });
    return { ok: true, status: this.store.run()!.status };
  }

  /** Completes a `callback` step: `not_found` for an unknown token, `conflict` for a used or expired one. */
  async answerCallback(
    token: string,
    answer: CallbackAnswer,
  ): Promise<"ok" | "not_found" | "conflict"> {
    if (!this.store.run()) return "not_found";
    const row = this.callbacks.get(token);
    if (!row) return "not_found";
    if (!this.callbacks.answer(token, answer)) return "conflict";
    const step = this.store.step(row.stepIndex)!;
    // Still in flight (the outbound POST has not returned): the attempt applies the answer when it does.
    if (
      step.status === "waiting" &&
      step.waitingFor === "callback" &&
      step.attempts === row.attempt
    ) {
      await this.applyAnswer(row.stepIndex, { type: "callback", token, answer });
    }
    return "ok";
  }

  override async alarm(): Promise<void> {
    const run = this.store.run();
    if (!run) return;
    if (this.iteration) {
      // An iteration is live in this instance: keep its lease and let it finish.
      await this.ctx.storage.setAlarm(Date.now() + LEASE_MS);
      return;
    }
    let soon: number | null = null;
    const config = settings(this.env);
    if (ACTIVE.has(run.status) && !run.riskGate) {
      this.iteration = new Iteration({
        store: this.store,
        db: this.db,
        callbacks: this.callbacks,
        tools: config.tools,
        maxOutputBytes: config.maxOutputBytes,
        results: this.resultCache,
        setAlarm: (at) => this.ctx.storage.setAlarm(at),
        runStatusChanged: (status, now) => this.runStatusChanged(status, now),
      });
      this.iterationDone = this.iteration.run();
      try {
        soon = await this.iterationDone;
      } finally {
        this.iteration = undefined;
        this.iterationDone = undefined;
      }
    }
    if (this.rollback.earliestDue(Date.now()) !== null) {
      await this.rollback.run({
        db: this.db,
        store: this.store,
        callbacks: this.callbacks,
        tools: config.tools,
        maxOutputBytes: config.maxOutputBytes,
        results: this.resultCache,
        runId: run.id,
        baseUrl: run.baseUrl,
        rand: Math.random,
        lease: () => this.ctx.storage.setAlarm(Date.now() + LEASE_MS),
      });
    }
    await this.deliverWebhooks();
    await this.rearm(soon);
  }

  /** Applies an outside answer: through the live iteration, or committed now for the next alarm. */
  private async applyAnswer(index: number, answer: Answer): Promise<void> {
    if (this.iteration) {
      this.iteration.answer(index, answer);
      return;
    }
    const step = this.store.step(index)!;
    const config = settings(this.env);
    const now = Date.now();
    commitAnswer(
      { store: this.store, callbacks: this.callbacks, maxOutputBytes: config.maxOutputBytes },
      this.store.plan().steps[index]!,
      step.attempts,
      step.startedAt ?? now,
      answer,
      now,
    );
    if (this.store.run()!.status === "waiting") this.store.setRunStatus("running");
    await this.rearm(now);
  }

  private cancelNow(now: number): void {
    this.store.cancelUnfinished(now);
    this.store.finishRun("cancelled", now);
    this.runStatusChanged("cancelled", now);
  }

  /** Records a run status users hear about, and enqueues its webhook. */
  private runStatusChanged(status: RunStatus, now: number): void {
    const { store } = this;
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
    if (status === "failed" && plan.config.rollback) this.rollback.enqueue(store);
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
    this.outbox.enqueue(`run.${status}`, payload, now);
  }

  private async deliverWebhooks(): Promise<void> {
    const webhook = this.store.plan().webhook;
    if (!webhook) return;
    await this.outbox.deliverDue(
      { url: webhook.url, secret: webhook.secret ?? this.env.WEBHOOK_SECRET },
      Date.now(),
    );
  }

  /** Points the alarm at the earliest due row (or `soon`); clears it when nothing is due. */
  private async rearm(soon: number | null = null): Promise<void> {
    const run = this.store.run();
    if (run) this.store.trimEvents();
    const now = Date.now();
    const candidates = [soon, this.outbox.earliestDue(), this.rollback.earliestDue(now)];
    if (run && ACTIVE.has(run.status) && !run.riskGate) candidates.push(this.store.earliestDue());
    const due = candidates.filter((t): t is number => t !== null);
    if (due.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...due));
  }

  private owned(owner: string): RunRecord | undefined {
    const run = this.store.run();
    return run && run.owner === owner ? run : undefined;
  }
}
