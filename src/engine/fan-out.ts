/**
 * Fan-out decisions for a `forEach` step (SPEC 2.1): which items start now, and what the
 * step does when none can. Each item is its own attempt series; at most `maxConcurrency`
 * are in flight. Pure: the shell persists items and calls tools.
 */
import { MinHeap } from "./heap";

export type ItemStatus = "pending" | "running" | "retrying" | "succeeded" | "failed" | "cancelled";

export interface ItemSnapshot {
  status: ItemStatus;
  nextAttemptAt: number | null;
}

export interface FanOut {
  readonly maxConcurrency: number;
  status: ItemStatus[];
  /** Next pending item to look at: items start in order. */
  cursor: number;
  timers: MinHeap;
  ready: number[];
  running: number;
  settled: number;
  failed: number;
  /** Items found `running` at load: their attempts were interrupted. */
  interrupted: number[];
}

export type FanOutNext =
  /** Items are in flight: wait for one, or until `wakeAt` (an item retry falls due). */
  | { type: "await"; wakeAt: number | null }
  /** Nothing in flight, only item retries later: the step itself waits until `at`. */
  | { type: "retry"; at: number }
  /** Every item settled. */
  | { type: "done"; failed: number };

export function createFanOut(items: readonly ItemSnapshot[], maxConcurrency: number): FanOut {
  const f: FanOut = {
    maxConcurrency,
    status: items.map((i) => i.status),
    cursor: 0,
    timers: new MinHeap(),
    ready: [],
    running: 0,
    settled: 0,
    failed: 0,
    interrupted: [],
  };
  items.forEach((item, k) => {
    if (item.status === "running") {
      f.running++;
      f.interrupted.push(k);
    } else if (item.status === "retrying") f.timers.push(item.nextAttemptAt ?? 0, k);
    else if (item.status !== "pending") {
      f.settled++;
      if (item.status === "failed") f.failed++;
    }
  });
  return f;
}

/** Items to start now (marked running), and what to do next. */
export function decideItems(f: FanOut, now: number): { start: number[]; next: FanOutNext } {
  for (let top = f.timers.peek(); top && top[0] <= now; top = f.timers.peek()) {
    f.timers.pop();
    if (f.status[top[1]] === "retrying") {
      f.status[top[1]] = "pending";
      f.ready.push(top[1]);
    }
  }
  const start: number[] = [];
  while (f.running < f.maxConcurrency) {
    const k = f.ready.length > 0 ? f.ready.shift()! : nextPending(f);
    if (k === undefined) break;
    f.status[k] = "running";
    f.running++;
    start.push(k);
  }
  const wakeAt = f.timers.peek()?.[0] ?? null;
  if (f.running > 0) return { start, next: { type: "await", wakeAt } };
  if (f.settled === f.status.length) return { start, next: { type: "done", failed: f.failed } };
  return { start, next: { type: "retry", at: wakeAt ?? now } };
}

export type ItemOutcome =
  | { type: "succeeded" }
  | { type: "failed" }
  | { type: "cancelled" }
  | { type: "retry"; at: number };

export function settleItem(f: FanOut, k: number, outcome: ItemOutcome): void {
  if (f.status[k] === "running") f.running--;
  switch (outcome.type) {
    case "retry":
      f.status[k] = "retrying";
      f.timers.push(outcome.at, k);
      return;
    case "succeeded":
    case "failed":
    case "cancelled":
      f.status[k] = outcome.type;
      f.settled++;
      if (outcome.type !== "succeeded") f.failed++;
      return;
    default:
      outcome satisfies never;
  }
}

function nextPending(f: FanOut): number | undefined {
  while (f.cursor < f.status.length && f.status[f.cursor] !== "pending") f.cursor++;
  return f.cursor < f.status.length ? f.cursor++ : undefined;
}
