/**
 * A forEach step's waterfall, from its attempt log (`GET /v1/runs/:id/steps/:stepId`): the
 * event log has no item attempts, only the step's start, its rounds of retries and its end.
 * Each item's attempts in its own lane, with backoff gaps only between attempts of that same
 * item; the step's row shows the union of every item's attempts, and backoff where no item
 * runs but one waits for its retry. Pure: a function of the log.
 */
import type { StepDetail } from "../types";
import type { Segment } from "./timeline-model";

export type AttemptLog = StepDetail["attemptLog"];
type Attempt = AttemptLog[number];

export interface ItemLane {
  item: number;
  segments: Segment[];
}

interface Span {
  start: number;
  /** null: still going. */
  end: number | null;
}

const endOf = (s: Span) => s.end ?? Infinity;

/** The union of `spans`: sorted, overlapping ones merged (an open one stays open). */
function union<T extends Span>(spans: readonly T[]): { span: Span; parts: T[] }[] {
  const merged: { span: Span; parts: T[] }[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = merged.at(-1);
    if (last && s.start <= endOf(last.span)) {
      last.span.end =
        s.end === null || last.span.end === null ? null : Math.max(last.span.end, s.end);
      last.parts.push(s);
    } else merged.push({ span: { start: s.start, end: s.end }, parts: [s] });
  }
  return merged;
}

/** `gap` less every span of `covered` (sorted, disjoint). */
function subtract(gap: Span & { end: number }, covered: readonly Span[]): Span[] {
  const pieces: Span[] = [];
  let from = gap.start;
  for (const c of covered) {
    if (endOf(c) <= from || c.start >= gap.end) continue;
    if (c.start > from) pieces.push({ start: from, end: c.start });
    from = Math.max(from, endOf(c));
  }
  if (from < gap.end) pieces.push({ start: from, end: gap.end });
  return pieces;
}

interface Run extends Span {
  failed: boolean;
}

function attemptSegment(a: Attempt): Segment & Run {
  const start = Date.parse(a.startedAt);
  const end = a.endedAt ? Date.parse(a.endedAt) : null;
  const failed = a.category !== undefined;
  return {
    kind: "attempt",
    start,
    end,
    failed,
    ...(end !== null && { outcome: failed ? "failed" : "succeeded" }),
    label: `item ${a.item ?? "?"} · attempt ${a.attempt}${failed ? `: ${a.category}` : ""}`,
  };
}

/** One lane per item: its attempts in order, a backoff between two of them. */
function itemLanes(log: AttemptLog): { lanes: ItemLane[]; gaps: (Span & { end: number })[] } {
  const byItem = new Map<number, Attempt[]>();
  for (const a of log) {
    const k = a.item ?? -1;
    byItem.set(k, [...(byItem.get(k) ?? []), a]);
  }
  const lanes: ItemLane[] = [];
  const gaps: (Span & { end: number })[] = [];
  for (const [item, attempts] of [...byItem].sort((a, b) => a[0] - b[0])) {
    const segments: Segment[] = [];
    let previous: Segment | undefined;
    for (const a of attempts.sort((x, y) => x.attempt - y.attempt)) {
      const { failed: _, ...segment } = attemptSegment(a);
      if (previous?.end != null && segment.start > previous.end) {
        const gap = { start: previous.end, end: segment.start };
        gaps.push(gap);
        segments.push({ kind: "backoff", ...gap, label: `item ${item} · backoff` });
      }
      segments.push(segment);
      previous = segment;
    }
    lanes.push({ item, segments });
  }
  return { lanes, gaps };
}

/** The step's row: the union of its items' attempts, and the backoff no attempt overlaps. */
export function forEachTimeline(log: AttemptLog): { row: Segment[]; items: ItemLane[] } {
  const { lanes, gaps } = itemLanes(log);
  const runs = union(log.map(attemptSegment));
  const row: Segment[] = runs.map(({ span, parts }) => {
    const failed = parts.filter((p) => p.failed).length;
    return {
      kind: "attempt",
      ...span,
      // Still going while any attempt is; red when any of them failed.
      ...(span.end !== null && { outcome: failed > 0 ? "failed" : "succeeded" }),
      label: `${parts.length} item attempt${parts.length === 1 ? "" : "s"}${failed ? `, ${failed} failed` : ""}`,
    };
  });
  const covered = runs.map((r) => r.span);
  const waiting = union(gaps.flatMap((g) => subtract(g, covered)));
  for (const { span } of waiting) row.push({ kind: "backoff", ...span, label: "items' backoff" });
  row.sort((a, b) => a.start - b.start);
  return { row, items: lanes };
}
