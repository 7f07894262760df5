/**
 * Conditions (SPEC 2.1 `when`, `trigger`; 5.3; 5.8): a step whose `when` is falsy is
 * skipped (`condition_false`), its dependents are skipped (`dependency_skipped`) unless
 * they run on `all_done`, and a run whose only non-successes are skips is `completed`.
 */
import { describe, expect, it } from "vitest";
import { byId, events, started, stepDetail } from "./helpers";
import { drive } from "./helpers";
import { runCalls, script, unique, upstreamUrl } from "./helpers";

describe("when", () => {
  it("false skips the step with reason condition_false and never calls its tool", async () => {
    const key = unique("cond-false");
    const runId = await started({
      steps: [{ id: "a", tool: "http", params: { url: script(key) }, when: false }],
    });
    const s = await drive(runId);
    expect(byId(s).a).toMatchObject({ status: "skipped", reason: "condition_false", attempts: 0 });
    expect(await runCalls(runId)).toHaveLength(0);
  });

  it("a skipped step's dependent is skipped with reason dependency_skipped", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, when: false },
        { id: "b", tool: "pass", params: { value: 2 }, dependsOn: ["a"] },
        { id: "c", tool: "pass", params: { value: 3 }, dependsOn: ["b"] },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.b).toMatchObject({ status: "skipped", reason: "dependency_skipped" });
    expect(steps.c).toMatchObject({ status: "skipped", reason: "dependency_skipped" });
  });

  it("a dependent with trigger all_done runs after a skipped dependency", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, when: false },
        {
          id: "cleanup",
          tool: "pass",
          params: { value: "done" },
          dependsOn: ["a"],
          trigger: "all_done",
        },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.a.status).toBe("skipped");
    expect(steps.cleanup.status).toBe("succeeded");
    expect((await stepDetail(runId, "cleanup")).data).toBe("done");
  });

  it("true runs the step", async () => {
    const runId = await started({
      steps: [{ id: "a", tool: "pass", params: { value: 7 }, when: true }],
    });
    const s = await drive(runId);
    expect(byId(s).a.status).toBe("succeeded");
    expect((await stepDetail(runId, "a")).data).toBe(7);
  });

  it("a template reading a previous step's data decides per value", async () => {
    const runId = await started({
      steps: [
        { id: "check", tool: "pass", params: { value: { ok: true, go: "false", n: 0, list: [] } } },
        { id: "yes", tool: "pass", params: { value: 1 }, when: "${steps.check.data.ok}" },
        { id: "no_string", tool: "pass", params: { value: 2 }, when: "${steps.check.data.go}" },
        { id: "no_zero", tool: "pass", params: { value: 3 }, when: "${steps.check.data.n}" },
        { id: "no_empty", tool: "pass", params: { value: 4 }, when: "${steps.check.data.list}" },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.yes.status).toBe("succeeded");
    for (const id of ["no_string", "no_zero", "no_empty"]) {
      expect(steps[id], id).toMatchObject({ status: "skipped", reason: "condition_false" });
    }
  });

  it("a `when` template makes the step wait for the step it reads (implicit dependency)", async () => {
    const runId = await started({
      steps: [
        { id: "gate", tool: "pass", params: { value: true }, when: "${steps.slow.data.go}" },
        { id: "slow", tool: "http", params: { url: `${upstreamUrl}/echo`, query: { go: "yes" } } },
      ],
    });
    const steps = byId(await drive(runId));
    expect(steps.slow.status).toBe("succeeded");
    // `${steps.slow.data.go}` does not exist (echo puts it under query): false, after slow ran
    expect(steps.gate).toMatchObject({ status: "skipped", reason: "condition_false" });
    expect(Date.parse(steps.gate.endedAt)).toBeGreaterThanOrEqual(Date.parse(steps.slow.endedAt));
  });

  it("records a step_skipped event with the reason", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, when: "${input.enabled}" },
        { id: "b", tool: "pass", params: {}, dependsOn: ["a"] },
      ],
      input: { enabled: false },
    });
    await drive(runId);
    const skipped = (await events(runId)).filter((e) => e.type === "step_skipped");
    expect(skipped).toEqual([
      expect.objectContaining({ stepId: "a", data: { reason: "condition_false" } }),
      expect.objectContaining({ stepId: "b", data: { reason: "dependency_skipped" } }),
    ]);
  });

  it("a run whose only non-successes are skips is completed", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: 1 } },
        { id: "b", tool: "pass", params: { value: 2 }, when: false },
        { id: "c", tool: "pass", params: { value: 3 }, dependsOn: ["b"] },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.summary).toMatchObject({ successfulSteps: 1, skippedSteps: 2, failedSteps: 0 });
  });

  it("a run where every step is skipped is completed", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, when: false },
        { id: "b", tool: "pass", params: { value: 2 }, dependsOn: ["a"] },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.progress).toMatchObject({ completedSteps: 2, percentage: 100 });
  });
});

describe("a step that fails before its tool is called", () => {
  it("params that do not resolve fail the step as template_unresolved, and the iteration goes on", async () => {
    const runId = await started({
      steps: [
        { id: "a", tool: "pass", params: { value: { x: 1 } } },
        {
          id: "b",
          tool: "pass",
          params: { value: "${steps.a.data.missing}" },
          when: "${steps.a.data.x}",
        },
        { id: "c", tool: "pass", params: { value: 3 }, dependsOn: ["b"], trigger: "all_done" },
      ],
    });
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.b.status).toBe("failed");
    expect(steps.b.error.category).toBe("template_unresolved");
    expect(steps.b.attempts).toBe(1);
    expect(steps.c.status).toBe("succeeded");
    expect(s.status).toBe("partial");
    expect(s.iterations).toBe(1);
  });

  it("a `when` that throws on the data fails that step as invalid_data; the rest of the run goes on", async () => {
    const runId = await started({
      input: [{ x: 1 }],
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, when: "${input[?(@.a.b)]}" },
        { id: "b", tool: "pass", params: { value: 2 } },
      ],
    });
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.a.status).toBe("failed");
    expect(steps.a.error).toMatchObject({
      category: "invalid_data",
      message: expect.stringMatching(/^when: /),
    });
    expect(steps.a.attempts).toBe(0);
    expect(steps.b.status).toBe("succeeded");
    expect(s.status).toBe("partial");
  });
});
