/**
 * The waterfall of a run: one row per step, its attempts, backoffs, waits and compensation;
 * under the selected forEach step, a row per item.
 */
import { Fragment } from "preact";
import type { ItemLane } from "./item-timeline";
import type { Lane, Segment, Timeline } from "./timeline-model";
import { duration } from "../format";

interface Props {
  timeline: Timeline;
  now: number;
  live: boolean;
  selectedStepId: string | null;
  onSelect: (stepId: string) => void;
}

/** Rows past this many are left out: the graph shows every step, this shows how time went. */
const MAX_ROWS = 400;
/** The selected forEach step's items shown under its row, at most. */
const MAX_ITEM_ROWS = 50;

function SegmentBar({ s, x0, span, now }: { s: Segment; x0: number; span: number; now: number }) {
  const end = s.end ?? now;
  const left = ((s.start - x0) / span) * 100;
  const width = Math.max(0.15, ((end - s.start) / span) * 100);
  const cls = `seg k-${s.kind} ${s.outcome ? `o-${s.outcome}` : ""} ${s.end === null ? "open" : ""}`;
  return (
    <div
      class={cls}
      style={{ left: `${left}%`, width: `${width}%` }}
      title={`${s.label} · ${duration(end - s.start)}${s.end === null ? " (so far)" : ""}`}
    />
  );
}

function Row(props: {
  lane: Lane;
  x0: number;
  span: number;
  now: number;
  selected: boolean;
  onSelect: () => void;
}) {
  const { lane, x0, span, now } = props;
  return (
    <div
      class={props.selected ? "tl-row selected" : "tl-row"}
      onClick={props.onSelect}
      data-step-id={lane.stepId}
    >
      <div class="tl-name" title={lane.stepId}>
        {lane.stepId}
      </div>
      <div class="tl-track">
        {lane.segments.map((s, k) => (
          <SegmentBar key={k} s={s} x0={x0} span={span} now={now} />
        ))}
        {lane.skipped && (
          <div
            class="tl-skip"
            style={{ left: `${((lane.skipped.at - x0) / span) * 100}%` }}
            title={`skipped: ${lane.skipped.reason}`}
          >
            ⤼
          </div>
        )}
      </div>
    </div>
  );
}

/** The selected forEach step's items, each its own attempts and backoffs. */
function ItemRows(props: {
  stepId: string;
  items: ItemLane[];
  x0: number;
  span: number;
  now: number;
}) {
  const { items, x0, span, now } = props;
  return (
    <>
      {items.slice(0, MAX_ITEM_ROWS).map((it) => (
        <div class="tl-sub" key={it.item} data-item-of={props.stepId} data-item={it.item}>
          <div class="tl-name">{`item ${it.item}`}</div>
          <div class="tl-track">
            {it.segments.map((s, k) => (
              <SegmentBar key={k} s={s} x0={x0} span={span} now={now} />
            ))}
          </div>
        </div>
      ))}
      {items.length > MAX_ITEM_ROWS && (
        <p class="muted small">{`${items.length - MAX_ITEM_ROWS} more items not shown`}</p>
      )}
    </>
  );
}

export function TimelineView({ timeline, now, live, selectedStepId, onSelect }: Props) {
  if (timeline.start === null) return <p class="muted">Nothing has happened yet.</p>;
  const x0 = timeline.start;
  const x1 = live ? Math.max(now, timeline.end ?? now) : (timeline.end ?? now);
  const span = Math.max(1, x1 - x0);
  const lanes = timeline.lanes.slice(0, MAX_ROWS);
  return (
    <div class="timeline" data-span-ms={span}>
      <div class="tl-axis">
        <span>0</span>
        <span>{duration(span / 2)}</span>
        <span>{duration(span)}</span>
      </div>
      {lanes.map((lane) => (
        <Fragment key={lane.stepId}>
          <Row
            lane={lane}
            x0={x0}
            span={span}
            now={now}
            selected={lane.stepId === selectedStepId}
            onSelect={() => onSelect(lane.stepId)}
          />
          {lane.stepId === selectedStepId && lane.items && (
            <ItemRows stepId={lane.stepId} items={lane.items} x0={x0} span={span} now={now} />
          )}
        </Fragment>
      ))}
      {timeline.lanes.length > MAX_ROWS && (
        <p class="muted">{`${timeline.lanes.length - MAX_ROWS} more steps not shown`}</p>
      )}
      <div class="tl-legend">
        <span class="seg-key k-attempt running" /> attempt running
        <span class="seg-key k-attempt o-succeeded" /> attempt succeeded
        <span class="seg-key k-attempt o-failed" /> attempt failed
        <span class="seg-key k-backoff" /> backoff
        <span class="seg-key k-wait" /> waiting
        <span class="seg-key k-compensation" /> compensation
        <span class="seg-key o-cancelled" /> cancelled
      </div>
    </div>
  );
}
