/**
 * The attempt verdict (SPEC 5.2): what becomes of a step, a forEach item or a compensation
 * once one of its attempts has an outcome. One pure function for all three, so the retry
 * policy, the output cap and the cancel and fail-fast rules are written once; the shell
 * commits the verdict and the scheduler settles it. A step's own checks (SPEC 9) come in
 * here too: its `verify` judges a success, and a failure for good may ask for a repair.
 */
import { MIN_PAUSE_MS } from "./flow-control";
import { storedOutput, type OutputLimits } from "./output";
import type { StepError } from "./records";
import { nextAttemptAt, type ErrorCategory, type RetryPolicy } from "./retry";
import { verificationFailure, type Verification } from "./verify";

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
  | {
      ok: false;
      category: ErrorCategory;
      message: string;
      status?: number;
      retryAfterMs?: number;
      /** The origin that answered, when a redirect led away from the URL called (its 429 pauses it). */
      answeredBy?: string;
    }
  | { suspend: Suspension };

export type Verdict =
  /** `data`: the output as stored (JSON text, within the output cap). */
  | { type: "succeeded"; data: string; status: number | null }
  | { type: "retry"; at: number; error: StepError }
  /**
   * `data`: an output that failed the step's `verify`, kept as stored (SPEC 9.1). `cause`: the
   * attempt's own error when the step's is another (no repair left: `replan_limit_reached`).
   */
  | { type: "failed"; error: StepError; data?: string; cause?: StepError }
  /** Failed for good, and a repair is asked for (SPEC 9.2) at `at` (null: a person may answer now). */
  | { type: "replan"; error: StepError; data?: string; at: number | null }
  /** The run was cancelled (or the attempt aborted by it): the attempt ends as cancelled. */
  | { type: "cancelled"; error: StepError }
  | { type: "suspended"; suspension: Suspension };

/** What the step itself asks of an outcome (SPEC 9); forEach items and compensations have neither. */
export interface StepChecks {
  /** The step's `verify`, with the context its other references resolve in. */
  verify?: Verification | null;
  /** Set when the plan replans: what the run may still ask for if the step fails for good. */
  replan?: ReplanAllowance | null;
}

/** What the run may still ask for when one of its steps fails for good (the shell counts). */
export interface ReplanAllowance {
  mode: "url" | "human";
  maxPerStep: number;
  /** Repairs asked for this step id so far, and in the whole run. */
  usedByStep: number;
  maxTotal: number;
  usedTotal: number;
  /** The cooldown: no repair is asked for before then (null: none was asked yet). */
  notBefore: number | null;
  now: number;
}

export interface VerdictRules extends StepChecks {
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
export type FinalVerdict = Exclude<Verdict, { type: "suspended" | "replan" }>;

export function attemptVerdict(
  result: AttemptResult,
  rules: VerdictRules & { noSuspend: string; verify?: null; replan?: null },
): FinalVerdict;
export function attemptVerdict(result: AttemptResult, rules: VerdictRules): Verdict;
export function attemptVerdict(result: AttemptResult, rules: VerdictRules): Verdict {
  if ("suspend" in result) {
    if (rules.noSuspend === null) return { type: "suspended", suspension: result.suspend };
    return failureVerdict({ category: "invalid_data", message: rules.noSuspend }, rules);
  }
  if (result.ok) return successVerdict(result.data, result.status ?? null, rules);
  const { category, message, status, retryAfterMs } = result;
  const error: StepError = { category, message, ...(status !== undefined && { status }) };
  return stepFailure(failureVerdict(error, rules, retryAfterMs), rules);
}

/**
 * A success's verdict: its output stored within the limits, then judged by the step's
 * `verify` (a failed verification keeps the stored data and is never retried).
 */
export function successVerdict(
  output: unknown,
  status: number | null,
  rules: Pick<VerdictRules, "output" | "item" | "halted" | "cancelled"> & StepChecks,
): Verdict {
  const stored = storedOutput(output, rules.output, rules.item);
  // The call itself answered: its HTTP status stays on the attempt and the step (SPEC 5.2).
  const answered = (error: StepError): StepError =>
    status === null ? error : { ...error, status };
  const fail = (error: StepError, data?: string): Verdict =>
    rules.cancelled
      ? { type: "cancelled", error: answered(error) }
      : stepFailure(
          { type: "failed", error: answered(error), ...(data !== undefined && { data }) },
          rules,
        );
  if (!stored.ok) return fail(stored.error);
  const unverified = rules.verify ? verificationFailure(rules.verify, output ?? null) : null;
  if (unverified) return fail(unverified, stored.json);
  return { type: "succeeded", data: stored.json, status };
}

/** A step's failure for good becomes a request for a repair when the plan replans and the run goes on. */
export function stepFailure(verdict: Verdict, rules: { halted: boolean } & StepChecks): Verdict {
  if (verdict.type !== "failed" || !rules.replan || rules.halted) return verdict;
  return replanOrFail(verdict.error, rules.replan, verdict.data);
}

/** Categories that never ask for a repair: a stop, a person's "no", or a repair that already failed. */
const NOT_REPAIRED: ReadonlySet<string> = new Set([
  "cancelled",
  "approval_denied",
  "replan_invalid",
  "replan_declined",
  "replan_unavailable",
  "replan_limit_reached",
]);

/**
 * A step failed for good with `error` (its `data` kept when it failed its `verify`): a repair
 * is asked for at `at`, or the step fails, with `replan_limit_reached` when the limits are used up.
 */
export function replanOrFail(error: StepError, allowance: ReplanAllowance, data?: string): Verdict {
  const kept = data === undefined ? {} : { data };
  if (NOT_REPAIRED.has(error.category)) return { type: "failed", error, ...kept };
  const used = limitUsedUp(allowance);
  if (used !== null) {
    const message = `${used}; the step failed with ${error.category}: ${error.message}`;
    const limit: StepError = { category: "replan_limit_reached", message };
    return { type: "failed", error: limit, cause: error, ...kept };
  }
  const at = Math.max(allowance.now, allowance.notBefore ?? allowance.now);
  const openNow = allowance.mode === "human" && at <= allowance.now;
  return { type: "replan", error, ...kept, at: openNow ? null : at };
}

function limitUsedUp(a: ReplanAllowance): string | null {
  if (a.usedByStep >= a.maxPerStep)
    return `no repair left for this step (replan.maxReplansPerStep ${a.maxPerStep})`;
  if (a.usedTotal >= a.maxTotal)
    return `no repair left in this run (replan.maxTotalReplans ${a.maxTotal})`;
  return null;
}

/** What a failed attempt becomes before the step's own checks. */
export type FailureVerdict = Extract<Verdict, { type: "retry" | "failed" | "cancelled" }>;

/** A failed attempt: a retry under its policy, or final (also once the run has halted). */
export function failureVerdict(
  error: StepError,
  rules: Pick<VerdictRules, "retry" | "counted" | "halted" | "cancelled" | "now" | "rand">,
  retryAfterMs?: number,
): FailureVerdict {
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

/** The verdict of an answer: answers are never retried (`checks`: the step's, SPEC 9). */
export function answerVerdict(
  answer: Answer,
  limits: OutputLimits,
  checks: StepChecks = {},
): Verdict {
  const rules = { ...checks, output: limits, item: false, halted: false, cancelled: false };
  let output: unknown;
  if (answer.type === "approval") {
    if (!answer.approved) {
      const message = answer.comment ? `approval denied: ${answer.comment}` : "approval denied";
      return { type: "failed", error: { category: "approval_denied", message } };
    }
    output = { approved: true, comment: answer.comment ?? null };
  } else if ("output" in answer.answer) output = answer.answer.output;
  else {
    const error: StepError = { category: "callback_failed", message: answer.answer.error.message };
    return stepFailure({ type: "failed", error }, rules);
  }
  return successVerdict(output, null, rules);
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
