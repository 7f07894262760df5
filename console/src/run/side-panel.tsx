/**
 * The selected step: its status, error, planned params (the API does not give resolved
 * params: templates are shown as written, header values redacted by the API), output and
 * attempt log. Re-read whenever the step's status entry changes.
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { clock, duration, prettyJson, time } from "../format";
import type { PlanStep, StepDetail, StepStatus } from "../types";
import { stepVersion } from "./use-item-attempts";

interface Props {
  runId: string;
  step: StepStatus;
  plan: PlanStep | undefined;
  onClose: () => void;
}

function Attempts({ log }: { log: StepDetail["attemptLog"] }) {
  if (log.length === 0) return <p class="muted">No attempts yet.</p>;
  return (
    <table class="small attempts">
      <thead>
        <tr>
          <th>#</th>
          <th>item</th>
          <th>started</th>
          <th>took</th>
          <th>outcome</th>
        </tr>
      </thead>
      <tbody>
        {log.map((a, k) => (
          <tr key={k} class={a.category ? "bad" : a.endedAt ? "good" : ""}>
            <td>{a.attempt}</td>
            <td>{a.item ?? ""}</td>
            <td>{clock(a.startedAt)}</td>
            <td>
              {a.endedAt ? duration(Date.parse(a.endedAt) - Date.parse(a.startedAt)) : "running"}
            </td>
            <td>
              {a.category
                ? `${a.category}${a.status ? ` (HTTP ${a.status})` : ""}${a.message ? `: ${a.message}` : ""}`
                : a.endedAt
                  ? `ok${a.status ? ` (HTTP ${a.status})` : ""}`
                  : "…"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SidePanel({ runId, step, plan, onClose }: Props) {
  const [detail, setDetail] = useState<StepDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const version = stepVersion(step);
  useEffect(() => {
    let live = true;
    api.step(runId, step.id).then(
      (d) => live && (setDetail(d), setError(null)),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [runId, step.id, version]);

  return (
    <aside class="side-panel" data-step-id={step.id}>
      <div class="panel-head">
        <h2>{step.id}</h2>
        <button type="button" class="close" title="close" onClick={onClose}>
          ×
        </button>
      </div>
      <Facts step={step} plan={plan} />
      {step.error && (
        <div class="step-error">
          <strong>{step.error.category}</strong>
          {step.error.status ? ` (HTTP ${step.error.status})` : ""}: {step.error.message}
        </div>
      )}
      {error && <p class="message">{error}</p>}
      <h3>Attempts</h3>
      {detail ? <Attempts log={detail.attemptLog} /> : <p class="muted">loading…</p>}
      {plan && <Planned plan={plan} />}
      <h3>Output</h3>
      {detail ? (
        <pre class="json output">{prettyJson(detail.data)}</pre>
      ) : (
        <p class="muted">loading…</p>
      )}
    </aside>
  );
}

/** The step's status entry at a glance. */
function Facts({ step, plan }: { step: StepStatus; plan: PlanStep | undefined }) {
  return (
    <dl class="facts">
      <dt>status</dt>
      <dd data-testid="step-status">{`${step.status}${step.reason ? ` (${step.reason})` : ""}${step.waitingFor ? ` for ${step.waitingFor}` : ""}`}</dd>
      <dt>tool</dt>
      <dd>{step.tool}</dd>
      <dt>attempts</dt>
      <dd>{step.attempts}</dd>
      <dt>took</dt>
      <dd>{duration(step.durationMs)}</dd>
      {step.nextAttemptAt && (
        <>
          <dt>next attempt</dt>
          <dd>{time(step.nextAttemptAt)}</dd>
        </>
      )}
      {step.items && (
        <>
          <dt>items</dt>
          <dd>{`${step.items.succeeded} succeeded, ${step.items.failed} failed, ${step.items.cancelled ? `${step.items.cancelled} cancelled, ` : ""}${step.items.running} running of ${step.items.total}`}</dd>
        </>
      )}
      {plan?.dependsOn.length ? (
        <>
          <dt>depends on</dt>
          <dd>{plan.dependsOn.join(", ")}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** What the plan says of the step: its params as written, `when`, `forEach`, `compensate`. */
function Planned({ plan }: { plan: PlanStep }) {
  return (
    <>
      <h3>Params (as planned)</h3>
      <p class="hint">
        Templates as written; the API does not return resolved params. Header values are redacted.
      </p>
      <pre class="json">{prettyJson(plan.params)}</pre>
      {plan.when !== undefined && <p>{`when: ${String(plan.when)}`}</p>}
      {plan.forEach !== undefined && (
        <p>{`forEach: ${typeof plan.forEach === "string" ? plan.forEach : prettyJson(plan.forEach, 500)}`}</p>
      )}
      {plan.compensate && (
        <>
          <h3>Compensation</h3>
          <pre class="json">{prettyJson(plan.compensate)}</pre>
        </>
      )}
    </>
  );
}
