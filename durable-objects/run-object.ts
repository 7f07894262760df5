/**
 * RunObject: one Durable Object per run. A thin shell: it stores the checkpoint in
 * SQLite (RunStore), runs iterations and webhook deliveries from `alarm()`, and answers
 * the API over RPC. Every method checks the caller owns the run; a stranger sees nothing.
 *
 * SQLite is the truth; the alarm is a pointer: every change ends with `rearm()`, which
 * points the alarm at the earliest due row, and `alarm()` is safe to run twice.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env } from "../src/env";
import type { CompiledPlan } from "../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord, type RunStatus } from "../src/engine/records";
import { attemptLog, runView, stepResult, stepView, type StepResult } from "../src/engine/status";
import { Iteration } from "./iteration";
import { Sql } from "./sql";
import { RunStore } from "./store";
import { WebhookOutbox } from "./webhook-outbox";

export type CreateOutcome = { created: boolean; status: string };
/** `null`: no such run (404); `ok: false`: not allowed in the run's state (409). */
export type ControlOutcome = { ok: true; status: string } | { ok: false; status: string; message: string } | null;

const ACTIVE: ReadonlySet<RunStatus> = new Set(["pending", "running"]);

export class RunObject extends DurableObject<Env> {
  private readonly store: RunStore;
  private readonly outbox: WebhookOutbox;
  private readonly resultCache = new Map<number, StepResult>();
  private iteration: Iteration | undefined;
  private iterationDone: Promise<number | null> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RunStore(ctx.storage);
    const config = settings(env);
    this.outbox = new WebhookOutbox(new Sql(ctx.storage.sql), {
      fetcher: (r) => fetch(r),
      allowedHosts: config.allowedHosts,
      maxAttempts: config.webhookMaxAttempts,
      event: (type, now, data) => this.store.event(type, now, null, null, data),
    });
  }

  /** Stores a new run and arms its first iteration. Idempotent: a second call changes nothing. */
  async create(runId: string, owner: string, plan: CompiledPlan): Promise<CreateOutcome> {
    const existing = this.store.run();
    if (existing) return { created: false, status: existing.status };
    const now = Date.now();
    this.store.createRun(runId, owner, plan, now);
    await this.ctx.storage.setAlarm(now);
    return { created: true, status: "pending" };
  }

  async status(owner: string) {
    const run = this.owned(owner);
    if (!run) return null;
    const plan = this.store.plan();
    const view = runView(run, plan, this.store.steps(), Date.now());
    return plan.webhook ? { ...view, webhook: this.outbox.view(plan.webhook.url) } : view;
  }

  async step(owner: string, stepId: string) {
    if (!this.owned(owner)) return null;
    const index = this.store.stepIndex(stepId);
    if (index === undefined) return undefined;
    const record = this.store.step(index)!;
    const { stepId: _, ...result } = stepResult(record);
    return { ...stepView(record), ...result, attemptLog: attemptLog(this.store.attempts(index)) };
  }

  async results(owner: string) {
    if (!this.owned(owner)) return null;
    return this.store.steps().map(stepResult);
  }

  async events(owner: string, after: number, limit: number) {
    const run = this.owned(owner);
    if (!run) return null;
    return { events: this.store.events(after, limit), dropped: run.eventsDropped, finished: FINAL_RUN_STATUSES.has(run.status) };
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
    } else {
      const now = Date.now();
      this.store.cancelUnfinished(now);
      this.store.finishRun("cancelled", now);
      this.runStatusChanged("cancelled", now);
    }
    await this.rearm();
    return { ok: true, status: this.store.run()!.status };
  }

  /** Continues a paused (bounded) run with `iterations` more iterations. */
  async resume(owner: string, iterations: number | undefined): Promise<ControlOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    if (run.status !== "paused") return { ok: false, status: run.status, message: `only a paused run can resume; this one is ${run.status}` };
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
      return { ok: false, status: run.status, message: `only a failed or partial run can be retried; this one is ${run.status}` };
    }
    const now = Date.now();
    this.store.redrive(now);
    this.resultCache.clear();
    await this.rearm(now);
    return { ok: true, status: "pending" };
  }

  override async alarm(): Promise<void> {
    const run = this.store.run();
    if (!run) return;
    if (this.iteration) {
      // An iteration is live in this instance: keep its lease and let it finish.
      await this.ctx.storage.setAlarm(Date.now() + 10_000);
      return;
    }
    let soon: number | null = null;
    if (ACTIVE.has(run.status)) {
      const config = settings(this.env);
      this.iteration = new Iteration({
        store: this.store,
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
      this.store.trimEvents(settings(this.env).maxEventsPerRun);
    }
    await this.deliverWebhooks();
    await this.rearm(soon);
  }

  /** Records a run status users hear about, and enqueues its webhook. */
  private runStatusChanged(status: RunStatus, now: number): void {
    const { store } = this;
    if (status === "paused") store.event("run_paused", now, null, null, { iterations: store.run()!.iterations });
    else {
      if (status === "cancelled") store.event("run_cancelled", now);
      store.event("run_finished", now, null, null, { status });
    }
    const plan = store.plan();
    if (!plan.webhook) return;
    const run = store.run()!;
    const view = runView(run, plan, store.steps(), now);
    this.outbox.enqueue(`run.${status}`, {
      runId: run.id,
      status,
      summary: view.summary,
      startedAt: view.startedAt,
      endedAt: view.endedAt,
    }, now);
  }

  private async deliverWebhooks(): Promise<void> {
    const webhook = this.store.plan().webhook;
    if (!webhook) return;
    await this.outbox.deliverDue({ url: webhook.url, secret: webhook.secret ?? this.env.WEBHOOK_SECRET }, Date.now());
  }

  /** Points the alarm at the earliest due row (or `soon`); clears it when nothing is due. */
  private async rearm(soon: number | null = null): Promise<void> {
    const run = this.store.run();
    const candidates = [soon, this.outbox.earliestDue()];
    if (run && ACTIVE.has(run.status)) candidates.push(this.store.earliestDue());
    const due = candidates.filter((t): t is number => t !== null);
    if (due.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...due));
  }

  private owned(owner: string): RunRecord | undefined {
    const run = this.store.run();
    return run && run.owner === owner ? run : undefined;
  }
}
