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

function close(lane: Lane, at: number, outcome?: Outcome, suffix = ""): void {
  const open = lane.segments.findLast((s) => s.end === null);
  if (!open) return;
  open.end = at;
  if (outcome) open.outcome = outcome;
  if (suffix) open.label += suffix;
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
  const forEach = new Set<string>();
  const lane = (stepId: string) => {
    let l = lanes.get(stepId);
    if (!l) lanes.set(stepId, (l = { stepId, segments: [] }));
    return l;
  };
  let start: number | null = null;
  let end: number | null = null;
  for (const e of events) {
    if (e.type.startsWith("webhook_")) continue;
    const at = Date.parse(e.at);
    start ??= at;
    end = at;
    const d = dataOf(e);
    if (e.type === "run_cancelled" || e.type === "run_finished") {
      for (const l of lanes.values()) close(l, at, "cancelled");
      continue;
    }
    if (!e.stepId) continue;
    const l = lane(e.stepId);
    switch (e.type) {
      case "step_started":
        if (d.forEach) forEach.add(e.stepId);
        close(l, at);
        l.segments.push({
          kind: "attempt",
          start: at,
          end: null,
          label: d.forEach ? "items" : `attempt ${e.attempt ?? "?"}`,
        });
        break;
      case "step_waiting":
        close(l, at);
        l.segments.push({
          kind: "wait",
          start: at,
          end: null,
          label: `waiting for ${String(d.waitingFor ?? "?")}`,
        });
        break;
      case "quota_wait":
        // An item's or a compensation's wait is in memory, inside the step's own segment.
        if (d.item !== undefined || d.compensation) break;
        close(l, at);
        l.segments.push({ kind: "wait", start: at, end: null, label: "waiting for quota" });
        break;
      case "step_retry_scheduled":
        if (forEach.has(e.stepId)) break; // its items' retries, not a retry of the step
        close(l, at, "failed", d.category ? `: ${String(d.category)}` : "");
        l.segments.push({ kind: "backoff", start: at, end: null, label: "backoff" });
        break;
      case "step_succeeded":
        close(l, at, "succeeded");
        break;
      case "step_failed":
        close(l, at, "failed", d.category ? `: ${String(d.category)}` : "");
        break;
      case "step_skipped":
        l.skipped = { at, reason: String(d.reason ?? "") };
        break;
      case "compensation_started":
        l.segments.push({ kind: "compensation", start: at, end: null, label: "compensation" });
        break;
      case "compensation_finished":
        close(l, at, d.status === "succeeded" ? "succeeded" : "failed");
        break;
    }
  }
  for (const id of forEach) {
    const log = itemLogs.get(id);
    if (log?.length) withItems(lanes.get(id)!, log);
  }
  const first = (l: Lane) => l.segments[0]?.start ?? l.skipped?.at ?? Infinity;
  return { start, end, lanes: [...lanes.values()].sort((a, b) => first(a) - first(b)) };
}

/** A forEach step's row from its attempt log; its waits and compensation stay the events'. */
function withItems(lane: Lane, log: AttemptLog): void {
  const { row, items } = forEachTimeline(log);
  const others = lane.segments.filter((s) => s.kind === "wait" || s.kind === "compensation");
  lane.segments = [...row, ...others].sort((a, b) => a.start - b.start);
  lane.items = items;
}
