/**
 * Outside answers to waiting steps (SPEC 4, 5.4): `POST /approve` for an `approval` step,
 * `POST /v1/callbacks/:token` for a `callback` step. Committed the same way whether an
 * iteration is live (it then settles the scheduler) or not (the next alarm reads the rows).
 */
import type { CompiledStep } from "../src/engine/plan";
import { storedOutput, type OutputLimits } from "../src/engine/output";
import type { StepError } from "../src/engine/records";
import type { CallbackAnswer, CallbackStore } from "./callback-store";
import type { RunStore } from "./store";

export type Answer =
  | { type: "approval"; approved: boolean; comment?: string }
  | { type: "callback"; token: string; answer: CallbackAnswer };

export interface AnswerDeps extends OutputLimits {
  store: RunStore;
  callbacks: CallbackStore;
}

/** Commits a success, unless its output is too large or too deep (then a failure). Returns the error, if any. */
export function commitSuccess(
  store: RunStore,
  step: CompiledStep,
  attempt: number,
  output: unknown,
  httpStatus: number | null,
  startedAt: number,
  now: number,
  limits: OutputLimits,
): StepError | null {
  const stored = storedOutput(output, limits);
  if (!stored.ok) return stored.error;
  store.stepSucceeded(step.index, step.id, attempt, stored.json, httpStatus, now - startedAt, now);
  return null;
}

/** Applies an answer to a waiting step. Returns the step's fate (answers are never retried). */
export function commitAnswer(
  deps: AnswerDeps,
  step: CompiledStep,
  attempt: number,
  startedAt: number,
  answer: Answer,
  now: number,
): "succeeded" | "failed" {
  const { store } = deps;
  let error: StepError | null;
  if (answer.type === "approval") {
    store.event(
      answer.approved ? "approval_granted" : "approval_denied",
      now,
      step.id,
      attempt,
      answer.comment ? { comment: answer.comment } : undefined,
    );
    error = answer.approved
      ? commitSuccess(
          store,
          step,
          attempt,
          { approved: true, comment: answer.comment ?? null },
          null,
          startedAt,
          now,
          deps,
        )
      : {
          category: "approval_denied",
          message: answer.comment ? `approval denied: ${answer.comment}` : "approval denied",
        };
  } else {
    deps.callbacks.use(answer.token);
    const a = answer.answer;
    error =
      "output" in a
        ? commitSuccess(store, step, attempt, a.output, null, startedAt, now, deps)
        : { category: "callback_failed", message: a.error.message };
  }
  if (error === null) return "succeeded";
  store.endAttempt(step.index, attempt, now, error);
  store.stepFailed(step.index, step.id, attempt, error, now);
  return "failed";
}
