/**
 * Controls that call the API: approve or deny (the risk gate with skipSteps, or an approval
 * step with a comment), cancel, resume, retry (redrive) and delete. Destructive ones ask
 * to be clicked twice.
 */
import { useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { navigate } from "../router";
import { FINAL_STATUSES, type RunStatus } from "../types";

interface Props {
  s: RunStatus;
  onDone: () => Promise<void>;
}

function useAction(onDone: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  /** `refresh: false`: the run is gone (deleted), do not read it again. */
  const run = async (what: () => Promise<unknown>, refresh = true) => {
    setBusy(true);
    setMessage(null);
    try {
      await what();
      if (refresh) await onDone();
    } catch (err) {
      const e = err as ApiError;
      setMessage(e instanceof ApiError && e.noRoute ? "not available on this server" : e.message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, message, run };
}

function ConfirmButton(props: {
  label: string;
  confirm: string;
  disabled: boolean;
  onConfirm: () => void;
  name: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button
        type="button"
        data-action={props.name}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
        data-action={`${props.name}-confirm`}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        keep
      </button>
    </span>
  );
}

function RiskGate({ s, stepIds, onDone }: Props & { stepIds: string[] }) {
  const [skip, setSkip] = useState<Set<string>>(new Set());
  const { busy, message, run } = useAction(onDone);
  const toggle = (id: string) => {
    const next = new Set(skip);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSkip(next);
  };
  return (
    <div class="approval" data-gate="risk">
      <strong>Risk gate: nothing runs until this is answered.</strong>
      <p>These steps need approval. Tick the ones to skip:</p>
      <ul class="skip-list">
        {stepIds.map((id) => (
          <li key={id}>
            <label>
              <input
                type="checkbox"
                name="skip"
                value={id}
                checked={skip.has(id)}
                onChange={() => toggle(id)}
              />
              {` skip ${id}`}
            </label>
          </li>
        ))}
      </ul>
      <button
        type="button"
        class="primary"
        data-action="approve-gate"
        disabled={busy}
        onClick={() =>
          run(() =>
            api.approve(s.runId, {
              approved: true,
              ...(skip.size > 0 && { skipSteps: [...skip] }),
            }),
          )
        }
      >
        {skip.size > 0 ? `Approve, skipping ${skip.size}` : "Approve"}
      </button>
      <ConfirmButton
        name="deny-gate"
        label="Deny (cancels the run)"
        confirm="Deny and cancel"
        disabled={busy}
        onConfirm={() => run(() => api.approve(s.runId, { approved: false }))}
      />
      {message && <p class="message">{message}</p>}
    </div>
  );
}

function StepApproval({ s, stepId, onDone }: Props & { stepId: string }) {
  const [comment, setComment] = useState("");
  const { busy, message, run } = useAction(onDone);
  const answer = (approved: boolean) =>
    run(() => api.approve(s.runId, { approved, stepId, ...(comment && { comment }) }));
  return (
    <div class="approval" data-gate="step" data-step-id={stepId}>
      <strong>{`Step ${stepId} waits for approval.`}</strong>
      <input
        type="text"
        placeholder="comment (optional)"
        value={comment}
        onInput={(e) => setComment((e.target as HTMLInputElement).value)}
      />
      <button
        type="button"
        class="primary"
        data-action="approve-step"
        disabled={busy}
        onClick={() => answer(true)}
      >
        Approve
      </button>
      <ConfirmButton
        name="deny-step"
        label="Deny"
        confirm="Deny (fails the step)"
        disabled={busy}
        onConfirm={() => answer(false)}
      />
      {message && <p class="message">{message}</p>}
    </div>
  );
}

export function Approvals({ s, onDone }: Props) {
  return (
    <>
      {(s.pendingApproval ?? []).map((p) =>
        p.gate === "risk" ? (
          <RiskGate key="risk" s={s} stepIds={p.stepIds} onDone={onDone} />
        ) : (
          p.stepIds.map((id) => <StepApproval key={id} s={s} stepId={id} onDone={onDone} />)
        ),
      )}
    </>
  );
}

export function Controls({ s, onDone }: Props) {
  const { busy, message, run } = useAction(onDone);
  const final = FINAL_STATUSES.has(s.status);
  return (
    <div class="controls">
      {!final && (
        <ConfirmButton
          name="cancel"
          label="Cancel run"
          confirm="Cancel it"
          disabled={busy}
          onConfirm={() => run(() => api.cancel(s.runId))}
        />
      )}
      {s.status === "paused" && (
        <button
          type="button"
          data-action="resume"
          disabled={busy}
          onClick={() => run(() => api.resume(s.runId))}
        >
          Resume
        </button>
      )}
      {(s.status === "failed" || s.status === "partial") && !s.rollback && (
        <button
          type="button"
          data-action="retry"
          disabled={busy}
          onClick={() => run(() => api.retry(s.runId))}
        >
          Retry failed steps
        </button>
      )}
      {final && (
        <ConfirmButton
          name="delete"
          label="Delete"
          confirm="Delete for good"
          disabled={busy}
          onConfirm={() =>
            run(async () => {
              await api.remove(s.runId);
              // Replaced: Back must not land on the run just deleted ("Run not found").
              navigate("/", null, true);
            }, false)
          }
        />
      )}
      {message && <span class="message">{message}</span>}
    </div>
  );
}
