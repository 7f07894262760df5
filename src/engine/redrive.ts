/**
 * What a redrive runs again (`POST /v1/runs/:id/retry`): the failed and cancelled steps, and
 * the steps skipped because of them, directly or down a chain of skips. A step skipped because
 * of a step that is not run again (a person skipped it, its `when` was false) would only be
 * skipped again: it stays as it is. Pure.
 */
import { topologicalOrder } from "./graph";
import type { SkipReason, StepStatus } from "./records";

export interface RedriveCandidate {
  status: StepStatus;
  reason: SkipReason | null;
}

const SKIPPED_FOR_A_DEPENDENCY: ReadonlySet<SkipReason | null> = new Set([
  "dependency_failed",
  "dependency_skipped",
]);

export function redrivenSteps(
  steps: readonly RedriveCandidate[],
  deps: readonly (readonly number[])[],
): number[] {
  const again = new Uint8Array(steps.length);
  for (const i of topologicalOrder(deps) ?? []) {
    const { status, reason } = steps[i]!;
    again[i] = Number(
      status === "failed" ||
        status === "cancelled" ||
        (status === "skipped" &&
          SKIPPED_FOR_A_DEPENDENCY.has(reason) &&
          deps[i]!.some((d) => again[d] === 1)),
    );
  }
  return steps.flatMap((_, i) => (again[i] === 1 ? [i] : []));
}
