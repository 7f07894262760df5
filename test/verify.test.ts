/**
 * Step verification (SPEC 9.1): `verify` is evaluated after a successful call against the
 * template context plus `output`; a falsy value fails the step as `verification_failed` (fatal,
 * never retried) with a message naming the expression, and the data it checked is kept.
 */
import { describe, expect, it } from "vitest";
import { api, byId, drive, eventTypes, events, execute, results } from "./helpers";
import { runCalls, stepDetail, submit, upstreamUrl } from "./helpers";

const facilities = (location: string) => ({
  url: `${upstreamUrl}/facilities`,
  query: { location },
});

describe("verify (SPEC 9.1)", () => {
  it("a truthy verify lets the step succeed", async () => {
    const run = await execute({
      steps: [
        { id: "find", tool: "http", params: facilities("Berlin"), verify: "${output.length}" },
      ],
    });
    expect(run.status).toBe("completed");
  });

  it("a falsy verify fails the step as verification_failed, once, keeping its data", async () => {
    const run = await execute({
      steps: [
        {
          id: "find",
          tool: "http",
          params: facilities("Berln"),
          verify: "${output.length}",
          retry: { maxRetries: 3, baseDelayMs: 0 },
        },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["find"] },
      ],
    });
    expect(run.status).toBe("failed");
    const find = await stepDetail(run.runId, "find");
    expect(find.status).toBe("failed");
    expect(find.error.category).toBe("verification_failed");
    expect(find.error.message).toContain("${output.length}");
    expect(find.error.message).toContain("resolved to 0");
    expect(find.data).toEqual([]);
    expect(find.attempts).toBe(1); // fatal: not retried
    // The call answered 200: its status stays on the attempt and the step (SPEC 5.2, 4).
    expect(find.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "verification_failed", status: 200 }),
    ]);
    expect(find.metadata).toMatchObject({ status: 200 });
    expect(byId(run).after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    const [result] = await results(run.runId);
    expect(result).toMatchObject({
      success: false,
      data: [],
      error: { category: "verification_failed" },
    });
    const types = await eventTypes(run.runId);
    expect(types.indexOf("verification_failed")).toBeGreaterThan(types.indexOf("step_started"));
    expect(types.indexOf("verification_failed")).toBeLessThan(types.indexOf("step_failed"));
    const event = (await events(run.runId)).find((e) => e.type === "verification_failed");
    expect(event).toMatchObject({
      stepId: "find",
      attempt: 1,
      data: { category: "verification_failed" },
    });
    expect(await runCalls(run.runId, "/facilities")).toHaveLength(1);
  });

  it.each([
    ["false", "${output.ok}", { ok: false }],
    ["an empty string", "${output.name}", { name: "" }],
    ["null", "${output.v}", { v: null }],
    ["an empty object", "${output.o}", { o: {} }],
    ["a path that matches nothing", "${output.missing}", { present: 1 }],
  ])("%s is falsy", async (_, verify, value) => {
    const run = await execute({ steps: [{ id: "s", tool: "pass", params: { value }, verify }] });
    expect(run.status).toBe("failed");
    expect(byId(run).s.error.category).toBe("verification_failed");
    expect(byId(run).s.error.message).toContain(verify);
  });

  it.each([
    ['the text "false"', { v: "false" }],
    ['the text "0"', { v: "0" }],
  ])("%s is truthy (only SPEC 9.1's values are falsy)", async (_, value) => {
    const run = await execute({
      steps: [{ id: "s", tool: "pass", params: { value }, verify: "${output.v}" }],
    });
    expect(run.status).toBe("completed");
  });

  it("verify may read other steps: they become dependencies", async () => {
    const { body } = await submit({
      steps: [
        { id: "b", tool: "pass", params: { value: 2 }, verify: "${steps.a.data}" },
        { id: "a", tool: "pass", params: { value: 1 } },
      ],
    });
    const plan = (await (await api(`/v1/runs/${body.runId}/plan`)).json()) as any;
    expect(plan.plan.steps[0]).toMatchObject({
      id: "b",
      dependsOn: ["a"],
      verify: "${steps.a.data}",
    });
    const run = await drive(body.runId);
    expect(run.status).toBe("completed");
    const [b, a] = run.steps;
    expect(Date.parse(b.startedAt)).toBeGreaterThanOrEqual(Date.parse(a.endedAt));
  });

  it.each([
    ["${output.", "template syntax error"],
    ["${steps.nope.data}", 'unknown step "nope"'],
    ["${bogus.x}", 'unknown template root "bogus"'],
  ])("verify %s is a 400 at submission", async (verify, message) => {
    const { res, body } = await submit({
      steps: [{ id: "s", tool: "pass", params: { value: 1 }, verify }],
    });
    expect(res.status).toBe(400);
    expect(body.error.issues).toEqual([
      expect.objectContaining({
        path: "steps.0.verify",
        message: expect.stringContaining(message),
      }),
    ]);
  });

  it("`output` is only a template root in verify", async () => {
    const { res, body } = await submit({
      steps: [{ id: "s", tool: "pass", params: { value: "${output.x}" } }],
    });
    expect(res.status).toBe(400);
    expect(body.error.issues[0].path).toBe("steps.0.params.value");
  });
});
