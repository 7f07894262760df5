import { describe, expect, it } from "vitest";
import { redrivenSteps, type RedriveCandidate } from "./redrive";

const step = (status: RedriveCandidate["status"], reason: RedriveCandidate["reason"] = null) => ({
  status,
  reason,
});

describe("redrivenSteps", () => {
  it("runs again the failed and cancelled steps and what was skipped because of them, down the chain", () => {
    // a failed; b skipped for a; c skipped for b; d cancelled; e succeeded
    const steps = [
      step("failed"),
      step("skipped", "dependency_failed"),
      step("skipped", "dependency_skipped"),
      step("cancelled"),
      step("succeeded"),
    ];
    expect(redrivenSteps(steps, [[], [0], [1], [], []])).toEqual([0, 1, 2, 3]);
  });

  it("leaves a step skipped because of one that is not run again (a person's skip, a false when)", () => {
    // x skipped by a person; y skipped for x; z's when was false; w skipped for z; v failed
    const steps = [
      step("skipped", "skipped_by_user"),
      step("skipped", "dependency_skipped"),
      step("skipped", "condition_false"),
      step("skipped", "dependency_skipped"),
      step("failed"),
    ];
    expect(redrivenSteps(steps, [[], [0], [], [2], []])).toEqual([4]);
  });

  it("runs again a step skipped for two reasons when one of its dependencies runs again, whatever the plan order", () => {
    // index 0 depends on 1 (skipped by a person) and 2 (failed)
    const steps = [
      step("skipped", "dependency_skipped"),
      step("skipped", "skipped_by_user"),
      step("failed"),
    ];
    expect(redrivenSteps(steps, [[1, 2], [], []])).toEqual([0, 2]);
  });
});
