/**
 * The QuotaGate of one run's Durable Object, wired to what it asks: the destinations' objects
 * (DESTINATION_SLOTS), this isolate's knowledge of pauses, and the pause board.
 */
import type { Env, Settings } from "../../src/env";
import { QuotaGate } from "../execution/quota-gate";
import type { PauseNotice } from "./pause-board";
import { pauseCache } from "./pause-cache";

export interface RunSide {
  /** The run's id (read when a destination is first asked: the run exists by then). */
  runId(): string;
  now(): number;
  /** Work beside the run (told to destinations, never awaited by a call). */
  beside(work: Promise<void>): void;
  /** Reads the pause board; null where there is nothing to read. */
  readBoard: (() => Promise<PauseNotice[]>) | null;
  /** A destination granted a call of the run (RunObject.quotaGranted). */
  granted(destination: string, ticket: string): Promise<void>;
}

export function runGate(env: Env, config: Settings, run: RunSide): QuotaGate {
  const slots = env.DESTINATION_SLOTS;
  let runId: string | undefined;
  return new QuotaGate({
    table: config.destinations,
    tools: config.tools,
    pauses: pauseCache,
    slots: (destination) => slots.get(slots.idFromName(destination)),
    readBoard: run.readBoard,
    onGrant: (destination, ticket) => run.beside(run.granted(destination, ticket)),
    beside: (work) => run.beside(work.then(() => {})),
    runId: () => (runId ??= run.runId()),
    now: run.now,
  });
}
