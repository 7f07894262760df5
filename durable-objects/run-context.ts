/**
 * What one run's work shares, built once per Durable Object instance and passed whole:
 * the checkpoint, the tools, the settings that shape attempts, the clock, the one place the
 * alarm is set, and the gate every call passes (flow control per destination). Iterations, compensations, answers and controls all take it.
 */
import type { OutputLimits } from "../src/engine/output";
import type { RunStatus } from "../src/engine/records";
import type { StepResult } from "../src/engine/status";
import type { ValidationContext } from "../src/engine/validate";
import type { ToolSet } from "../src/tools";
import type { Fetcher } from "../src/tools/http-client";
import type { AlarmPointer } from "./alarm";
import type { CallWatch } from "./execution/call-watch";
import type { QuotaGate } from "./execution/quota-gate";
import type { Checkpoint } from "./storage/checkpoint";

export interface RunContext {
  readonly checkpoint: Checkpoint;
  readonly tools: ToolSet;
  /** What a step's stored output may be (MAX_OUTPUT_BYTES, MAX_OUTPUT_DEPTH). */
  readonly output: OutputLimits;
  /** Results of finished steps, kept across iterations (they never change; a redrive clears them). */
  readonly results: Map<number, StepResult>;
  readonly alarm: AlarmPointer;
  /** Admits each call by its destination's limits and pauses (SPEC 10). */
  readonly gate: QuotaGate;
  /** The calls in flight in this instance, for the watchdog (see DueWork). */
  readonly calls: CallWatch;
  /** The run's clock (tests substitute one they can move). */
  now(): number;
  rand(): number;
  /** The run reached a status users hear about (final, paused, waiting): events, rollback, webhook. */
  statusChanged(status: RunStatus, now: number): void;
  readonly replan: ReplanEnv;
}

/** What repairs (SPEC 9.2) need of the Worker: its validation, and how to call a planner. */
export interface ReplanEnv {
  /** A repaired plan is validated like a submission (tools, egress, MAX_STEPS_PER_PLAN). */
  validation: ValidationContext;
  fetcher: Fetcher;
  /** ALLOWED_HOSTS, checked again on each planner call: a message when the URL is denied. */
  checkUrl(url: string): string | null;
  /** WEBHOOK_SECRET: planner calls are signed like webhooks (the plan's webhook secret first). */
  workerSecret: string | undefined;
  /** A planner's answer: at most MAX_PLAN_BYTES, nested at most MAX_JSON_DEPTH. */
  maxAnswerBytes: number;
  maxAnswerDepth: number;
}
