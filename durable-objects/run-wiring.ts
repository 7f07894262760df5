/**
 * Builds what one RunObject instance's work shares (RunContext) and its webhook outbox from
 * the Worker's settings and bindings, so the object itself stays a shell of RPCs.
 */
import type { AlarmPort } from "./alarm-port";
import { validationContext, type Env, type Settings } from "../src/env";
import { checkUrl } from "../src/engine/egress";
import { AlarmPointer } from "./alarm";
import { CallWatch } from "./execution/call-watch";
import { recordStatusChange } from "./controls/status-change";
import { runGate, type RunSide } from "./destinations/run-gate";
import type { ReplanEnv, RunContext } from "./run-context";
import type { Checkpoint } from "./storage/checkpoint";
import { WebhookOutbox } from "./webhooks/outbox";

/** What the wiring needs of the object: its seams (tests substitute them) and the gate's hooks. */
export type RunSeams = Omit<RunSide, "runId"> & { alarms(): AlarmPort };

export function wireRun(
  storage: DurableObjectStorage,
  env: Env,
  config: Settings,
  checkpoint: Checkpoint,
  seams: RunSeams,
): { work: RunContext; outbox: WebhookOutbox } {
  const { now } = seams;
  const outbox = new WebhookOutbox(checkpoint.deliveries, {
    now,
    fetcher: (r) => fetch(r),
    allowedHosts: config.allowedHosts,
    maxAttempts: config.webhookMaxAttempts,
    event: (type, at, data) => checkpoint.events.append(type, at, null, null, data),
  });
  const work: RunContext = {
    checkpoint,
    tools: config.tools,
    output: config,
    results: new Map(),
    alarm: new AlarmPointer(seams.alarms, checkpoint, now, config.retentionDays, storage.kv),
    calls: new CallWatch(),
    gate: runGate(env, config, { ...seams, runId: () => checkpoint.run.read()!.id }),
    now,
    rand: Math.random,
    statusChanged: (status, at) => recordStatusChange(checkpoint, outbox, status, at),
    replan: replanEnv(env, config),
  };
  return { work, outbox };
}

function replanEnv(env: Env, config: Settings): ReplanEnv {
  return {
    validation: validationContext(config),
    fetcher: (r) => fetch(r),
    checkUrl: (url) => checkUrl(url, config.allowedHosts)?.message ?? null,
    workerSecret: env.WEBHOOK_SECRET,
    maxAnswerBytes: config.maxPlanBytes,
    maxAnswerDepth: config.maxJsonDepth,
  };
}
