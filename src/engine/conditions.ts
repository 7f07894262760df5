/** Step conditions (SPEC 2.1 `when`): whether a step runs. Pure. */
import type { StepError } from "./records";
import {
  TemplateUnresolvedError,
  conditionTruthy,
  resolveTemplates,
  type TemplateContext,
} from "./templates";

/**
 * A `when` that matches nothing is false, like an empty wildcard. One that cannot be
 * evaluated (a JSONPath filter that throws on this data) fails the step as `invalid_data`.
 */
export function conditionHolds(
  when: string | boolean,
  context: TemplateContext,
): boolean | StepError {
  try {
    return conditionTruthy(resolveTemplates(when, context));
  } catch (err) {
    if (err instanceof TemplateUnresolvedError) return false;
    return { category: "invalid_data", message: `when: ${(err as Error).message}` };
  }
}
