/**
 * The waterfall, built from the run's event log: per step, its attempts (and how each
 * ended), the backoff gaps before retries, the waits (approval, callback, timer, quota) and the
 * compensation that undid it. Pure: a function of the events, and of the forEach steps'
 * attempt logs (the events have no item attempts: item-timeline.ts draws those).
 */
import type { RunEvent } from "../types";
import { forEachTimeline, type AttemptLog, type ItemLane } from "./item-timeline";

export type SegmentKind = "attempt" | "backoff" | "wait" | "compensation";
export type Outcome = "succeeded" | "failed" | "cancelled";

export interface Segment {
  kind: SegmentKind;
  start: number;
  /** null: still going. */
  end: number | null;
  outcome?: Outcome;
  /** A failed attempt's error category, when the events name it. */
  category?: string;
  label: string;
}

export interface Lane {
  stepId: string;
  segments: Segment[];
  /** When and why it was skipped, if it was. */
  skipped?: { at: number; reason: string };
  /** A forEach step's: each item's attempts and backoffs (once its attempt log is read). */
  items?: ItemLane[];
}

export interface Timeline {
  start: number | null;
  /**
   * The last event's time; the run's end once it is final. Webhook deliveries are left out:
   * they go on beside the run, up to a minute after it, and would stretch a short run's axis.
   */
  end: number | null;
  lanes: Lane[];
}

type Data = Record<string, unknown>;
const dataOf = (e: RunEvent): Data =>
  typeof e.data === "object" && e.data !== null ? (e.data as Data) : {};

function close(lane: Lane, at: number, outcome?: Outcome, category?: unknown): void {
  const open = lane.segments.findLast((s) => s.end === null);
  if (!open) return;
  open.end = at;
  if (outcome) open.outcome = outcome;
  if (category) withCategory(open, category);
}

function withCategory(segment: Segment, category: unknown): void {
  if (segment.category || typeof category !== "string") return;
  segment.category = category;
  segment.label += `: ${category}`;
}

/**
 * A step starts to wait, often inside an attempt: an attempt that led to a repair failed (its
 * category comes with `verification_failed` before, or `replan_requested` just after); one
 * that hands over to an approval, a callback or a timer did its part and the wait goes on.
 * Left open, the attempt would be drawn as still running, in no colour of the legend.
 */
function closeBeforeWait(lane: Lane, at: number, waitingFor: unknown, category: unknown): void {
  const open = lane.segments.findLast((s) => s.end === null);
  if (open?.kind !== "attempt") return close(lane, at);
  if (waitingFor === "replan") close(lane, at, "failed", category);
  else close(lane, at, "succeeded");
}

/** What one pass over the events remembers beyond the lanes. */
interface Pass {
  forEach: Set<string>;
  /** A step's verification_failed category, until the wait for its repair closes the attempt. */
  verdicts: Map<string, unknown>;
}

/** A step's event on its lane. */
function onStepEvent(l: Lane, e: RunEvent, at: number, pass: Pass): void {
  const d = dataOf(e);
  const open = (kind: SegmentKind, label: string) =>
    l.segments.push({ kind, start: at, end: null, label });
  switch (e.type) {
    case "step_started":
      if (d.forEach) pass.forEach.add(l.stepId);
      close(l, at);
      open("attempt", d.forEach ? "items" : `attempt ${e.attempt ?? "?"}`);
      break;
    case "verification_failed":
      pass.verdicts.set(l.stepId, d.category);
      break;
    case "step_waiting":
      closeBeforeWait(l, at, d.waitingFor, pass.verdicts.get(l.stepId));
      pass.verdicts.delete(l.stepId);
      open("wait", `waiting for ${String(d.waitingFor ?? "?")}`);
      break;
    case "quota_wait":
      // An item's or a compensation's wait is in memory, inside the step's own segment.
      if (d.item !== undefined || d.compensation) break;
      close(l, at);
      open("wait", "waiting for quota");
      break;
    case "step_retry_scheduled":
      // A forEach step's are its items' retries, not a retry of the step; its compensation's are.
      if (pass.forEach.has(l.stepId) && !d.compensation) break;
      close(l, at, "failed", d.category);
      open("backoff", "backoff");
      break;
    case "step_succeeded":
      close(l, at, "succeeded");
      break;
    case "step_failed":
      close(l, at, "failed", d.category);
      break;
    case "replan_requested": {
      // Its error names the category of the attempt the step_waiting just before closed.
      const failed = l.segments.findLast((s) => s.kind === "attempt");
      const error = (typeof d.error === "object" && d.error !== null ? d.error : {}) as Data;
      if (failed?.outcome === "failed") withCategory(failed, error.category);
      break;
    }
    case "step_skipped":
      l.skipped = { at, reason: String(d.reason ?? "") };
      break;
    case "compensation_started":
      close(l, at); // the backoff before a compensation's retry
      open("compensation", "compensation");
      break;
    case "compensation_finished":
      close(l, at, d.status === "succeeded" ? "succeeded" : "failed");
      break;
  }
}

/**
 * `itemLogs`: the attempt logs of forEach steps, by step id. Without one, a forEach step's row
 * is one bar from its start to its end: its items retry each on their own schedule, so the
 * step's rounds of retries say nothing of when any item ran.
 */
export function buildTimeline(
  events: readonly RunEvent[],
  itemLogs: ReadonlyMap<string, AttemptLog> = new Map(),
): Timeline {
  const lanes = new Map<string, Lane>();
  const pass: Pass = { forEach: new Set(), verdicts: new Map() };
  let start: number | null = null;
  let end: number | null = null;
  for (const e of events) {
    if (e.type.startsWith("webhook_")) continue;
    const at = Date.parse(e.at);
    start ??= at;
    end = at;
    if (e.type === "run_cancelled" || e.type === "run_finished") {
      for (const l of lanes.values()) close(l, at, "cancelled");
      continue;
    }
    if (!e.stepId) continue;
    let l = lanes.get(e.stepId);
    if (!l) lanes.set(e.stepId, (l = { stepId: e.stepId, segments: [] }));
    onStepEvent(l, e, at, pass);
  }
  for (const id of pass.forEach) {
    const log = itemLogs.get(id);
    if (log?.length) withItems(lanes.get(id)!, log);
  }
  const first = (l: Lane) => l.segments[0]?.start ?? l.skipped?.at ?? Infinity;
  return { start, end, lanes: [...lanes.values()].sort((a, b) => first(a) - first(b)) };
}

/** A forEach step's row from its attempt log; its waits and rollback stay the events'. */
function withItems(lane: Lane, log: AttemptLog): void {
  const { row, items } = forEachTimeline(log);
  const rollback = lane.segments.find((s) => s.kind === "compensation")?.start ?? Infinity;
  const others = lane.segments.filter((s) => s.kind === "wait" || s.start >= rollback);
  lane.segments = [...row, ...others].sort((a, b) => a.start - b.start);
  lane.items = items;
}
