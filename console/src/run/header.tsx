/** The run page's header: status, progress with ETA, summary, tags, run error, webhook deliveries. */
import { duration, time } from "../format";
import type { RunStatus } from "../types";
import type { Connection } from "./live";
import { liveProgress, progressShape } from "./progress-model";

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge-status st-${status}`} data-run-status={status}>
      {status}
    </span>
  );
}

function Progress({ s, readAt, now }: { s: RunStatus; readAt: number; now: number }) {
  const p = s.progress;
  const { elapsedMs, etaMs } = liveProgress(s, readAt, now);
  const shape = progressShape(s);
  return (
    <div class="progress-block">
      <div class="progress" title={shape.text}>
        {shape.parts.map((part) => (
          <div
            key={part.outcome}
            class={`progress-fill pf-${part.outcome}`}
            data-outcome={part.outcome}
            style={{ width: `${part.percent}%` }}
          />
        ))}
      </div>
      <div class="progress-text">
        <span data-testid="progress">{shape.text}</span>
        <span data-testid="elapsed">{`elapsed ${duration(elapsedMs)}`}</span>
        {etaMs > 0 && <span data-testid="eta">{`ETA ${duration(etaMs)}`}</span>}
        {p.runningSteps > 0 && <span>{`${p.runningSteps} running`}</span>}
      </div>
    </div>
  );
}

function Summary({ s }: { s: RunStatus }) {
  const m = s.summary;
  return (
    <div class="summary">
      <span class="sum ok">{`${m.successfulSteps} succeeded`}</span>
      <span class="sum failed">{`${m.failedSteps} failed`}</span>
      <span class="sum skipped">{`${m.skippedSteps} skipped`}</span>
      <span class="sum cancelled">{`${m.cancelledSteps} cancelled`}</span>
    </div>
  );
}

function Webhook({ webhook }: { webhook: NonNullable<RunStatus["webhook"]> }) {
  return (
    <details class="webhook" data-webhook-state={webhook.state}>
      <summary>
        {`webhook ${webhook.state} · ${webhook.deliveries.length} deliveries · `}
        <code>{webhook.url}</code>
      </summary>
      <table class="small">
        <thead>
          <tr>
            <th>event</th>
            <th>attempt</th>
            <th>at</th>
            <th>answer</th>
          </tr>
        </thead>
        <tbody>
          {webhook.deliveries.map((d) => (
            <tr key={`${d.eventId}-${d.attempt}`}>
              <td>{d.type}</td>
              <td>{d.attempt}</td>
              <td>{time(d.at)}</td>
              <td class={d.error || (d.status ?? 0) >= 300 ? "bad" : "good"}>
                {d.error ?? d.status ?? "–"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

export function RunHeader({
  s,
  readAt,
  now,
  connection,
  tags,
}: {
  s: RunStatus;
  /** When `s` was read, and the page's clock: the elapsed time and ETA tick between reads. */
  readAt: number;
  now: number;
  connection: Connection;
  tags?: Record<string, string> | undefined;
}) {
  return (
    <header class="run-header">
      <div class="run-title">
        <h1>{s.name ?? <span class="muted">unnamed run</span>}</h1>
        <StatusBadge status={s.status} />
        <span class={`conn conn-${connection}`} title="event stream" data-connection={connection}>
          {connection === "live" ? "● live" : connection === "ended" ? "" : `○ ${connection}`}
        </span>
      </div>
      <div class="run-meta">
        <code>{s.runId}</code>
        <span>{`created ${time(s.createdAt)}`}</span>
        {s.endedAt && <span>{`ended ${time(s.endedAt)}`}</span>}
        <span>{`${s.mode.type} · ${s.iterations} iterations`}</span>
        {tags &&
          Object.entries(tags).map(([k, v]) => <span class="tag" key={k}>{`${k}:${v}`}</span>)}
      </div>
      <Progress s={s} readAt={readAt} now={now} />
      <Summary s={s} />
      {s.error && <p class="run-error">{`${s.error.category}: ${s.error.message}`}</p>}
      {s.rollback && (
        <p class={`rollback rb-${s.rollback.state}`}>
          {`rollback ${s.rollback.state}: ${s.rollback.steps.map((r) => `${r.stepId} ${r.status}`).join(", ")}`}
        </p>
      )}
      {s.webhook && <Webhook webhook={s.webhook} />}
    </header>
  );
}
