/**
 * RunObject: one Durable Object per run. A thin shell: it stores the checkpoint in
 * SQLite (RunStore), runs iterations, compensations and webhook deliveries from
 * `alarm()`, and answers the API over RPC. Every method checks the caller owns the run;
 * a stranger sees nothing. Each method loads the run, asks a pure decision (run-controls,
 * approval-control) or builds a view (run-views), commits, and re-arms the alarm.
 *
 * SQLite is the truth; the alarm is a pointer: every change ends with `rearm()`, which
 * points the alarm at the earliest due row, and `alarm()` is safe to run twice.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env, type Settings } from "../src/env";
import { riskGateSteps } from "../src/engine/approval";
import type { CompiledPlan } from "../src/engine/plan";
import type { RunRecord, RunStatus } from "../src/engine/records";
import type { StepResult } from "../src/engine/status";
import { alarmTarget, iterates } from "./alarm-target";
import { commitAnswer, type Answer } from "./answers";
import { decideApproval, type ApproveOutcome, type ApproveRequest } from "./approval-control";
import { CallbackStore, type CallbackAnswer } from "./callback-store";
import { Iteration, LEASE_MS, type IterationDeps } from "./iteration";
import { Rollback } from "./rollback";
import * as controls from "./run-controls";
import type { RunState } from "./run-state";
import { recordRunStatusChange } from "./run-status-change";
import { eventPage, planView, statusView, stepDetail, stepResults } from "./run-views";
import { Sql } from "./sql";
import { RunStore } from "./store";
import { WebhookOutbox } from "./webhook-outbox";

// The API imports these from here: they are the types of the RPC surface.
export type { ApproveOutcome, ApproveRequest } from "./approval-control";
export type { ControlOutcome, CreateOutcome } from "./run-controls";

export class RunObject extends DurableObject<Env> {
  private readonly config: Settings;
  private readonly store: RunStore;
  private readonly callbacks: CallbackStore;
  private readonly rollback: Rollback;
  /** The checkpoint, rollback queue and webhook outbox: what views and status changes read. */
  private readonly state: RunState;
  /** Results of finished steps, kept across iterations (a redrive clears them). */
  private readonly resultCache = new Map<number, StepResult>();
  /** What iterations, compensations and answers share: the checkpoint, the tools, the results. */
  private readonly work: Omit<IterationDeps, "setAlarm" | "runStatusChanged">;
  /** The iteration live in this instance: answers and cancels go through it. */
  private iteration: Iteration | undefined;
  /** Settles when the live iteration ends (cancel waits for it; test/helpers.ts reads it). */
  private iterationDone: Promise<number | null> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = settings(env);
    this.store = new RunStore(ctx.storage, this.config.maxEventsPerRun);
    const db = new Sql(ctx.storage.sql);
    this.callbacks = new CallbackStore(db);
    this.rollback = new Rollback(db, () => this.store.plan());
    const outbox = new WebhookOutbox(db, {
      fetcher: (r) => fetch(r),
      allowedHosts: this.config.allowedHosts,
      maxAttempts: this.config.webhookMaxAttempts,
      event: (type, now, data) => this.store.event(type, now, null, null, data),
    });
    const { store, callbacks, rollback, resultCache: results } = this;
    const { tools, maxOutputBytes } = this.config;
    this.state = { store, rollback, outbox };
    this.work = { store, db, callbacks, tools, maxOutputBytes, results };
  }

  /** Stores a new run and arms its first iteration (or waits at the risk gate). Idempotent. */
  async create(
    runId: string,
    owner: string,
    plan: CompiledPlan,
    baseUrl: string,
  ): Promise<controls.CreateOutcome> {
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
    return run ? statusView(this.state, run, Date.now()) : null;
  }

  async step(owner: string, stepId: string) {
    return this.owned(owner) ? stepDetail(this.store, stepId) : null;
  }

  async plan(owner: string) {
    return this.owned(owner) ? planView(this.store.plan()) : null;
  }

  async results(owner: string) {
    return this.owned(owner) ? stepResults(this.store) : null;
  }

  async events(owner: string, after: number, limit: number) {
    const run = this.owned(owner);
    return run ? eventPage(this.store, run, after, limit) : null;
  }

  async cancel(owner: string): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkCancel(run);
    if (refused) return refused;
    // A live iteration is writing the rows: it cancels its own work, then we re-arm.
    if (this.iteration) {
      this.iteration.cancel();
      await this.iterationDone;
    } else this.cancelNow(Date.now());
    await this.rearm();
    return { ok: true, status: this.store.run()!.status };
  }

  /** Continues a paused (bounded) run with `iterations` more iterations. */
  async resume(owner: string, iterations: number | undefined): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkResume(run);
    if (refused) return refused;
    const now = Date.now();
    const more = controls.resumeIterations(this.store.plan(), iterations);
    this.store.resume(run.iterations + more, now);
    await this.rearm(now);
    return { ok: true, status: "running" };
  }

  /** Redrive: re-runs failed steps and the steps skipped or cancelled because of them. */
  async redrive(owner: string): Promise<controls.ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const refused = controls.checkRedrive(run, () => this.rollback.queued());
    if (refused) return refused;
    const now = Date.now();
    this.store.redrive(now);
    this.resultCache.clear(); // the redriven steps will have new results
    await this.rearm(now);
    return { ok: true, status: "pending" };
  }

  /** Answers the risk gate, or an `approval` step (SPEC 5.4). */
  async approve(owner: string, request: ApproveRequest): Promise<ApproveOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    const now = Date.now();
    const decision = decideApproval(run, this.store, request);
    switch (decision.type) {
      case "refuse":
        return decision.outcome;
      case "deny_risk_gate":
        this.store.event("approval_denied", now, null, null, {
          gate: "risk",
          ...(decision.comment && { comment: decision.comment }),
        });
        this.cancelNow(now);
        await this.rearm();
        return { ok: true, status: "cancelled" };
      case "open_risk_gate":
        this.store.openRiskGate(decision.skipSteps, now);
        await this.rearm(now);
        return { ok: true, status: "pending" };
      case "answer_step":
        await this.applyAnswer(decision.index, decision.answer);
        return { ok: true, status: this.store.run()!.status };
    }
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
    const soon = iterates(run) ? await this.runIteration() : null;
    if (this.rollback.earliestDue(Date.now()) !== null) await this.runRollback(run);
    await this.deliverWebhooks();
    await this.rearm(soon);
  }

  /** Runs one iteration; resolves to when the next should run (null: the rows decide). */
  private async runIteration(): Promise<number | null> {
    this.iteration = new Iteration({
      ...this.work,
      setAlarm: (at) => this.ctx.storage.setAlarm(at),
      runStatusChanged: (status, now) => this.runStatusChanged(status, now),
    });
    this.iterationDone = this.iteration.run();
    try {
      return await this.iterationDone;
    } finally {
      this.iteration = undefined;
      this.iterationDone = undefined;
    }
  }

  /** Runs the compensations that are due, one at a time. */
  private async runRollback(run: RunRecord): Promise<void> {
    await this.rollback.run({
      ...this.work,
      runId: run.id,
      baseUrl: run.baseUrl,
      rand: Math.random,
      lease: () => this.ctx.storage.setAlarm(Date.now() + LEASE_MS),
    });
  }

  /** Applies an outside answer: through the live iteration, or committed now for the next alarm. */
  private async applyAnswer(index: number, answer: Answer): Promise<void> {
    if (this.iteration) {
      this.iteration.answer(index, answer);
      return;
    }
    const step = this.store.step(index)!;
    const now = Date.now();
    const plannedStep = this.store.plan().steps[index]!;
    commitAnswer(this.work, plannedStep, step.attempts, step.startedAt ?? now, answer, now);
    if (this.store.run()!.status === "waiting") this.store.setRunStatus("running");
    await this.rearm(now);
  }

  private cancelNow(now: number): void {
    this.store.cancelUnfinished(now);
    this.store.finishRun("cancelled", now);
    this.runStatusChanged("cancelled", now);
  }

  private runStatusChanged(status: RunStatus, now: number): void {
    recordRunStatusChange(this.state, status, now);
  }

  private async deliverWebhooks(): Promise<void> {
    const webhook = this.store.plan().webhook;
    if (!webhook) return;
    await this.state.outbox.deliverDue(
      { url: webhook.url, secret: webhook.secret ?? this.env.WEBHOOK_SECRET },
      Date.now(),
    );
  }

  /** Points the alarm at the earliest due row (or `soon`); clears it when nothing is due. */
  private async rearm(soon: number | null = null): Promise<void> {
    const run = this.store.run();
    if (run) this.store.trimEvents();
    const at = alarmTarget(this.state, run, soon, Date.now());
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }

  private owned(owner: string): RunRecord | undefined {
    const run = this.store.run();
    return run && run.owner === owner ? run : undefined;
  }
}
