/**
 * The attempt verdict (SPEC 5.2): what becomes of a step, a forEach item or a compensation
 * once one of its attempts has an outcome. One pure function for all three, so the retry
 * policy, the output cap and the cancel and fail-fast rules are written once; the shell
 * commits the verdict and the scheduler settles it.
 */
import { MIN_PAUSE_MS } from "./flow-control";
import { storedOutput, type OutputLimits } from "./output";
import type { StepError } from "./records";
import { nextAttemptAt, type ErrorCategory, type RetryPolicy } from "./retry";

/** What an attempt asks to wait for instead of finishing: the alarm (never a timer) wakes it. */
export type Suspension =
  | { waitingFor: "timer"; until: number }
  | { waitingFor: "approval" }
  | { waitingFor: "callback"; until: number; token: string }
  | ({ waitingFor: "quota" } & QuotaWait);

/**
 * A call held back before it starts (SPEC 10): its destination is paused, or it is queued for a
 * slot. Not an attempt: it spends no retry. The destination's grant, or the run's alarm at
 * `until` (the pause's end, or a time to ask again), wakes it.
 */
export interface QuotaWait {
  destination: string;
  reason: "paused" | "queued";
  /** When the run asks again if no grant woke the call first. */
  until: number;
  /** The call's place in the destination's queue (1: next), when known. */
  position: number | null;
  /** The end of the destination's pause, while it is paused. */
  pausedUntil: number | null;
}

/** How one attempt ended: the tool's answer, or what the shell observed (a timeout, a restart). */
export type AttemptResult =
  | { ok: true; data: unknown; status?: number }
  | { ok: false; category: ErrorCategory; message: string; status?: number; retryAfterMs?: number }
  | { suspend: Suspension };

export type Verdict =
  /** `data`: the output as stored (JSON text, within the output cap). */
  | { type: "succeeded"; data: string; status: number | null }
  | { type: "retry"; at: number; error: StepError }
  | { type: "failed"; error: StepError }
  /** The run was cancelled (or the attempt aborted by it): the attempt ends as cancelled. */
  | { type: "cancelled"; error: StepError }
  | { type: "suspended"; suspension: Suspension };

export interface VerdictRules {
  retry: RetryPolicy;
  /** The attempt's number as the retry policy counts it (attempts before the last redrive excluded). */
  counted: number;
  /** The run starts nothing new (fail-fast tripped, or cancelled): a failure is final. */
  halted: boolean;
  /** The run was cancelled: a failed attempt ends as cancelled. */
  cancelled: boolean;
  /** What a stored output may be (MAX_OUTPUT_BYTES, MAX_OUTPUT_DEPTH). */
  output: OutputLimits;
  /** A forEach item's output: it nests one level less (the step's data holds it in an array). */
  item: boolean;
  /** Why this attempt may not wait (forEach items, compensations), or null when it may. */
  noSuspend: string | null;
  now: number;
  rand: () => number;
}

/** A verdict that ends the attempt without waiting (forEach items, compensations). */
export type FinalVerdict = Exclude<Verdict, { type: "suspended" }>;

export function attemptVerdict(
  result: AttemptResult,
  rules: VerdictRules & { noSuspend: string },
): FinalVerdict;
export function attemptVerdict(result: AttemptResult, rules: VerdictRules): Verdict;
export function attemptVerdict(result: AttemptResult, rules: VerdictRules): Verdict {
  if ("suspend" in result) {
    if (rules.noSuspend === null) return { type: "suspended", suspension: result.suspend };
    return failureVerdict({ category: "invalid_data", message: rules.noSuspend }, rules);
  }
  if (result.ok) {
    const stored = storedOutput(result.data, rules.output, rules.item);
    if (!stored.ok) return failureVerdict(stored.error, rules);
    return { type: "succeeded", data: stored.json, status: result.status ?? null };
  }
  const { category, message, status, retryAfterMs } = result;
  const error: StepError = { category, message, ...(status !== undefined && { status }) };
  return failureVerdict(error, rules, retryAfterMs);
}

/** A failed attempt: a retry under its policy, or final (also once the run has halted). */
export function failureVerdict(
  error: StepError,
  rules: VerdictRules,
  retryAfterMs?: number,
): FinalVerdict {
  if (error.category === "cancelled" || rules.cancelled) return { type: "cancelled", error };
  const at = rules.halted
    ? null
    : nextAttemptAt(
        rules.retry,
        rules.counted,
        error.category as ErrorCategory,
        rules.now,
        rules.rand,
        retryAfterMs,
      );
  return at === null ? { type: "failed", error } : { type: "retry", at, error };
}

/** A step's call must wait for its destination: the step is `waiting` for `quota`. */
export function quotaVerdict(wait: QuotaWait): Verdict {
  return { type: "suspended", suspension: { waitingFor: "quota", ...wait } };
}

/**
 * How long an attempt's answer asks every run to leave its destination alone (SPEC 10): a 429
 * (its Retry-After, else the shortest pause) or a 503 with Retry-After. Null for any other answer.
 */
export function destinationPause(result: AttemptResult): number | null {
  if ("suspend" in result || result.ok) return null;
  if (result.status === 429) return result.retryAfterMs ?? MIN_PAUSE_MS;
  if (result.status === 503 && result.retryAfterMs !== undefined) return result.retryAfterMs;
  return null;
}

/** An outside answer to a waiting step (SPEC 4, 5.4): `POST /approve` or `POST /v1/callbacks/:token`. */
export type Answer =
  | { type: "approval"; approved: boolean; comment?: string }
  | { type: "callback"; token: string; answer: CallbackAnswer };

export type CallbackAnswer = { output: unknown } | { error: { message: string } };

/** The verdict of an answer: answers are never retried. */
export function answerVerdict(answer: Answer, limits: OutputLimits): Verdict {
  let output: unknown;
  if (answer.type === "approval") {
    if (!answer.approved) {
      const message = answer.comment ? `approval denied: ${answer.comment}` : "approval denied";
      return { type: "failed", error: { category: "approval_denied", message } };
    }
    output = { approved: true, comment: answer.comment ?? null };
  } else if ("output" in answer.answer) output = answer.answer.output;
  else
    return {
      type: "failed",
      error: { category: "callback_failed", message: answer.answer.error.message },
    };
  const stored = storedOutput(output, limits);
  if (!stored.ok) return { type: "failed", error: stored.error };
  return { type: "succeeded", data: stored.json, status: null };
}

/**
 * A forEach step's assembled output (`n` items whose stored JSON totals `bytes`, plus the
 * array's brackets and commas) is too large: the error, else null.
 */
export function itemsOutputTooLarge(n: number, bytes: number, max: number): StepError | null {
  const total = bytes + Math.max(n - 1, 0) + 2;
  if (total <= max) return null;
  return {
    category: "output_too_large",
    message: `the ${n} items' outputs total ${total} bytes, more than MAX_OUTPUT_BYTES (${max})`,
  };
}
