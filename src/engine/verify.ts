/**
 * Step verification (SPEC 9.1): a step's `verify` template, evaluated against the template
 * context plus `output` (the step's data) after a successful call. A falsy value (`false`, 0,
 * "", null, [], {}, or a path that matches nothing) fails the step as `verification_failed`,
 * with a message naming the expression and what it resolved to. Pure.
 */
import type { StepError } from "./records";
import {
  TemplateUnresolvedError,
  isTruthy,
  resolveTemplates,
  type TemplateContext,
} from "./templates";

/** What a step's output is checked against: its template, and the context of its other references. */
export interface Verification {
  template: string;
  context: TemplateContext;
}

/** Characters of the resolved value the message quotes. */
const QUOTED = 200;

/** The error of an output that fails `verification`, or null when it passes. */
export function verificationFailure(verification: Verification, output: unknown): StepError | null {
  const { template } = verification;
  let value: unknown;
  try {
    value = resolveTemplates(template, { ...verification.context, output });
  } catch (err) {
    if (!(err instanceof TemplateUnresolvedError))
      return failure(`verify "${template}" could not be evaluated: ${(err as Error).message}`);
    return failure(`verify "${template}" failed: ${err.message}`);
  }
  if (isTruthy(value)) return null;
  return failure(`verify "${template}" failed: it resolved to ${quote(value)}`);
}

function failure(message: string): StepError {
  return { category: "verification_failed", message };
}

function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > QUOTED ? `${text.slice(0, QUOTED)}...` : text;
}
