/**
 * RunObject: one Durable Object per run. A thin shell: it stores the checkpoint in
 * SQLite (RunStore), runs iterations from `alarm()` (Iteration), and answers the API
 * over RPC. Every method checks the caller owns the run; a stranger sees nothing.
 */
import { DurableObject } from "cloudflare:workers";
import { settings, type Env } from "../src/env";
import type { CompiledPlan } from "../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord } from "../src/engine/records";
import { attemptLog, runView, stepResult, stepView, type StepResult } from "../src/engine/status";
import { Iteration } from "./iteration";
import { RunStore } from "./store";

export type CreateOutcome = { created: boolean; status: string };
export type CancelOutcome = { ok: true; status: string } | { ok: false; status: string } | null;

export class RunObject extends DurableObject<Env> {
  private readonly store: RunStore;
  private readonly resultCache = new Map<number, StepResult>();
  private iteration: Iteration | undefined;
  private iterationDone: Promise<void> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RunStore(ctx.storage);
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
    return runView(run, this.store.plan(), this.store.steps(), Date.now());
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

  /** `null`: no such run; `ok: false`: the run already ended otherwise (409). */
  async cancel(owner: string): Promise<CancelOutcome> {
    const run = this.owned(owner);
    if (!run) return null;
    if (run.status === "cancelled") return { ok: true, status: "cancelled" };
    if (FINAL_RUN_STATUSES.has(run.status)) return { ok: false, status: run.status };
    if (this.iteration) {
      this.iteration.cancel();
      await this.iterationDone;
    } else {
      const now = Date.now();
      this.store.cancelUnfinished(now);
      this.store.finishRun("cancelled", now);
      this.store.event("run_cancelled", now);
      this.store.event("run_finished", now, null, null, { status: "cancelled" });
      await this.setAlarm(null);
    }
    return { ok: true, status: this.store.run()!.status };
  }

  override async alarm(): Promise<void> {
    const run = this.store.run();
    if (!run || (run.status !== "pending" && run.status !== "running")) return;
    if (this.iteration) {
      // An iteration is already live in this instance; keep its lease and let it finish.
      await this.ctx.storage.setAlarm(Date.now() + 10_000);
      return;
    }
    const config = settings(this.env);
    this.iteration = new Iteration({
      store: this.store,
      tools: config.tools,
      maxOutputBytes: config.maxOutputBytes,
      results: this.resultCache,
      setAlarm: (at) => this.setAlarm(at),
    });
    this.iterationDone = this.iteration.run();
    try {
      await this.iterationDone;
    } finally {
      this.iteration = undefined;
      this.iterationDone = undefined;
    }
  }

  private owned(owner: string): RunRecord | undefined {
    const run = this.store.run();
    return run && run.owner === owner ? run : undefined;
  }

  private async setAlarm(at: number | null): Promise<void> {
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }
}
