import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "./plan";
import { configSchema, replanSchema } from "./plan-schema";
import { DEFAULT_RETRY } from "./retry";
import { endIteration } from "./run-decisions";
import { createScheduler, decide, onlyWaitingForAnswers, outcomeOf, settle } from "./scheduler";
import { compilePlan, type ValidationContext } from "./validate";
import { diagnose, plannerVerdict, readRepairAnswer, repairPlan } from "./replan";
import {
  attemptVerdict,
  replanOrFail,
  stepFailure,
  type ReplanAllowance,
  type VerdictRules,
} from "./verdict";
import { newTemplateContext } from "./templates";

const ctx: ValidationContext = {
  maxSteps: 10,
  tool: (name) => (["pass", "http"].includes(name) ? {} : undefined),
  checkUrl: () => null,
};

function compiled(raw: unknown): CompiledPlan {
  const result = compilePlan(raw, ctx);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.plan;
}

const allowance = (over: Partial<ReplanAllowance> = {}): ReplanAllowance => ({
  mode: "url",
  maxPerStep: 3,
  usedByStep: 0,
  maxTotal: 5,
  usedTotal: 0,
  notBefore: null,
  now: 1_000,
  ...over,
});

const failedVerify = { category: "verification_failed" as const, message: "verify failed" };

describe("replanOrFail: a failure for good asks for a repair within the limits (SPEC 9.2)", () => {
  it("asks at once without an earlier repair, else once the cooldown is over", () => {
    expect(replanOrFail(failedVerify, allowance())).toEqual({
      type: "replan",
      error: failedVerify,
      at: 1_000,
    });
    expect(replanOrFail(failedVerify, allowance({ notBefore: 4_000 }))).toMatchObject({
      at: 4_000,
    });
    expect(replanOrFail(failedVerify, allowance({ notBefore: 500 }))).toMatchObject({ at: 1_000 });
  });

  it("a person may answer now (at: null), or once the cooldown is over", () => {
    expect(replanOrFail(failedVerify, allowance({ mode: "human" }))).toMatchObject({ at: null });
    expect(
      replanOrFail(failedVerify, allowance({ mode: "human", notBefore: 2_000 })),
    ).toMatchObject({
      at: 2_000,
    });
  });

  it("limits used up (0 included) fail the step with replan_limit_reached, keeping its data", () => {
    for (const over of [{ maxPerStep: 0 }, { usedByStep: 3 }, { maxTotal: 0 }, { usedTotal: 5 }]) {
      const v = replanOrFail(failedVerify, allowance(over), "[]");
      expect(v).toMatchObject({
        type: "failed",
        data: "[]",
        error: { category: "replan_limit_reached" },
        cause: failedVerify,
      });
      expect(v.type === "failed" && v.error.message).toContain(
        "verification_failed: verify failed",
      );
    }
    expect(replanOrFail(failedVerify, allowance({ usedByStep: 2, usedTotal: 4 })).type).toBe(
      "replan",
    );
  });

  it("a denied approval, a stop or a failed repair never asks for one", () => {
    for (const category of [
      "approval_denied",
      "cancelled",
      "replan_invalid",
      "replan_declined",
      "replan_unavailable",
      "replan_limit_reached",
    ] as const)
      expect(replanOrFail({ category, message: "x" }, allowance()).type).toBe("failed");
  });

  it("a halted run, or a plan without replan, fails as before", () => {
    const failed = { type: "failed" as const, error: failedVerify };
    expect(stepFailure(failed, { halted: true, replan: allowance() })).toBe(failed);
    expect(stepFailure(failed, { halted: false })).toBe(failed);
  });
});

describe("attemptVerdict with the step's checks (SPEC 9)", () => {
  const rules = (over: Partial<VerdictRules> = {}): VerdictRules => ({
    retry: { ...DEFAULT_RETRY, jitter: "none" },
    counted: 1,
    halted: false,
    cancelled: false,
    output: { maxOutputBytes: 1000, maxOutputDepth: 8 },
    item: false,
    noSuspend: null,
    now: 1_000,
    rand: () => 0.5,
    ...over,
  });
  const verify = {
    template: "${output.items}",
    context: newTemplateContext(null, { id: "r", name: null }),
  };

  it("verify judges a success: falsy fails it, keeping the data; truthy lets it succeed", () => {
    expect(attemptVerdict({ ok: true, data: { items: [] } }, rules({ verify }))).toEqual({
      type: "failed",
      data: '{"items":[]}',
      error: {
        category: "verification_failed",
        message: 'verify "${output.items}" failed: it resolved to []',
      },
    });
    expect(attemptVerdict({ ok: true, data: { items: [1] } }, rules({ verify })).type).toBe(
      "succeeded",
    );
  });

  it("a verification failure or retries exhausted ask for a repair; a retryable failure retries first", () => {
    expect(
      attemptVerdict({ ok: true, data: {} }, rules({ verify, replan: allowance() })),
    ).toMatchObject({
      type: "replan",
      data: "{}",
      error: { category: "verification_failed" },
    });
    const down = { ok: false as const, category: "server_error" as const, message: "500" };
    expect(attemptVerdict(down, rules({ replan: allowance() })).type).toBe("retry");
    expect(attemptVerdict(down, rules({ counted: 4, replan: allowance() })).type).toBe("replan");
    expect(outcomeOf(replanOrFail(failedVerify, allowance()))).toEqual({
      type: "wait",
      at: 1_000,
      for: "replan",
    });
  });
});

describe("plannerVerdict: one planner call (SPEC 9.2)", () => {
  const rules = {
    retry: { ...DEFAULT_RETRY, jitter: "none" as const },
    counted: 1,
    halted: false,
    cancelled: false,
    now: 1_000,
    rand: () => 0,
  };

  it("a 200 with a repair or a giveUp is an answer; anything else is replan_invalid", () => {
    expect(
      plannerVerdict({ ok: true, data: { steps: [{ id: "a", tool: "pass" }] } }, rules),
    ).toEqual({
      type: "answer",
      answer: { steps: [{ id: "a", tool: "pass" }] },
    });
    expect(plannerVerdict({ ok: true, data: { giveUp: true, reason: "no" } }, rules)).toMatchObject(
      {
        type: "answer",
        answer: { giveUp: true, reason: "no" },
      },
    );
    for (const data of ["text", { steps: [] }, { giveUp: false }, null])
      expect(plannerVerdict({ ok: true, data }, rules)).toMatchObject({
        type: "failed",
        error: { category: "replan_invalid" },
      });
  });

  it("429/5xx/network are retried under the run's policy, then replan_unavailable with the status", () => {
    const down = {
      ok: false as const,
      category: "server_error" as const,
      message: "HTTP 503",
      status: 503,
    };
    expect(plannerVerdict(down, rules)).toMatchObject({ type: "retry", at: 2_000 });
    expect(plannerVerdict(down, { ...rules, counted: 4 })).toMatchObject({
      type: "failed",
      error: { category: "replan_unavailable", status: 503 },
    });
    const refused = {
      ok: false as const,
      category: "client_error" as const,
      message: "HTTP 403",
      status: 403,
    };
    expect(plannerVerdict(refused, rules)).toMatchObject({
      error: { category: "replan_unavailable" },
    });
    expect(plannerVerdict(down, { ...rules, cancelled: true }).type).toBe("cancelled");
    const huge = {
      ok: false as const,
      category: "output_too_large" as const,
      message: "big",
      status: 200,
    };
    expect(plannerVerdict(huge, rules)).toMatchObject({ error: { category: "replan_invalid" } });
    const garbled = {
      ok: false as const,
      category: "invalid_data" as const,
      message: "not JSON",
      status: 200,
    };
    expect(plannerVerdict(garbled, rules)).toMatchObject({ error: { category: "replan_invalid" } });
  });
});

describe("repairPlan: the merged plan, validated like a submission (SPEC 9.2)", () => {
  const plan = compiled({
    replan: { url: "https://planner.example.com" },
    steps: [
      { id: "a", tool: "pass", params: { value: 1 } },
      { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
      { id: "c", tool: "pass", params: { value: "${step[1].data}" } },
    ],
  });

  it("redefines the failed step at its index and appends new steps; the revision grows", () => {
    const result = repairPlan(
      plan,
      1,
      [
        { id: "n1", tool: "pass", params: { value: 2 } },
        { id: "b", tool: "http", params: { url: "https://x.example.com/${steps.n1.data}" } },
      ],
      ctx,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.newStepIds).toEqual(["n1"]);
    expect(result.plan.revision).toBe(1);
    expect(result.plan.steps.map((s) => [s.index, s.id, s.tool, s.deps])).toEqual([
      [0, "a", "pass", []],
      [1, "b", "http", [3]],
      [2, "c", "pass", [1]],
      [3, "n1", "pass", []],
    ]);
    expect(result.plan.replan).toEqual(plan.replan);
    expect(repairPlan(result.plan, 1, [{ id: "b", tool: "pass" }], ctx)).toMatchObject({
      ok: true,
      plan: { revision: 2 },
    });
  });

  it("keeps a header value the planner saw as [redacted] and sent back; other values are the repair's", () => {
    const headers = { Authorization: "Bearer tok", "X-Trace": "t1" };
    const withTokens = compiled({
      steps: [
        {
          id: "call",
          tool: "http",
          params: { url: "https://api.example.com/a", headers },
          compensate: { tool: "http", params: { url: "https://api.example.com/undo", headers } },
        },
      ],
    });
    // Sent back in another case than the plan's: header names are case-insensitive.
    const seen = { authorization: "[redacted]", "X-Trace": "t2", "X-New": "[redacted]" };
    const result = repairPlan(
      withTokens,
      0,
      [
        {
          id: "call",
          tool: "http",
          params: { url: "https://api.example.com/b", headers: seen },
          compensate: {
            tool: "http",
            params: { url: "https://api.example.com/undo", headers: seen },
          },
        },
      ],
      ctx,
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const step = result.plan.steps[0]!;
    const expected = { authorization: "Bearer tok", "X-Trace": "t2", "X-New": "[redacted]" };
    expect(step.params).toMatchObject({ url: "https://api.example.com/b", headers: expected });
    expect(step.compensate?.params.headers).toEqual(expected);
  });

  it("refuses a repair that brings a step needing approval: the risk gate was answered before the run", () => {
    const gatedPlan = compiled({
      config: { requireApprovalForRisk: "high", autoApproveReadonly: true },
      steps: [{ id: "a", tool: "pass" }],
    });
    const result = repairPlan(
      gatedPlan,
      0,
      [
        { id: "a", tool: "pass", risk: "high" },
        { id: "look", tool: "pass", risk: "high", readonly: true },
        { id: "danger", tool: "http", risk: "high", params: { url: "https://api.test/x" } },
        { id: "fine", tool: "pass", risk: "medium" },
      ],
      ctx,
    );
    expect(result).toMatchObject({ ok: false, code: "invalid_plan" });
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).toEqual(["steps.0.risk", "steps.2.risk"]);
    expect(result.issues[1]!.message).toMatch(/"danger" would need approval.*"high"/);
  });

  it("holds the merged plan to MAX_PLAN_BYTES, as a submission", () => {
    const big = { id: "a", tool: "pass", params: { value: "x".repeat(2_000) } };
    const tooLarge = repairPlan(
      plan,
      1,
      [
        { id: "b", tool: "pass" },
        { ...big, id: "z" },
      ],
      {
        ...ctx,
        maxPlanBytes: 1_500,
      },
    );
    expect(tooLarge).toMatchObject({
      ok: false,
      issues: [
        { path: "plan", message: expect.stringMatching(/more than MAX_PLAN_BYTES \(1500\)/) },
      ],
    });
    const fits = repairPlan(
      plan,
      1,
      [
        { id: "b", tool: "pass" },
        { ...big, id: "z" },
      ],
      {
        ...ctx,
        maxPlanBytes: 100_000,
      },
    );
    expect(fits.ok).toBe(true);
  });

  it("names issues by their path in the repair, or in the run's plan", () => {
    const result = repairPlan(
      plan,
      1,
      [
        { id: "b", tool: "pass", dependsOn: ["c"] },
        { id: "n1", tool: "nope" },
      ],
      ctx,
    );
    expect(result).toMatchObject({
      ok: false,
      code: "invalid_plan",
      issues: [
        { path: "steps.1.tool", message: 'unknown tool "nope"' },
        { message: expect.stringMatching(/dependency cycle/) }, // every problem at once
      ],
    });
    const cycle = repairPlan(plan, 1, [{ id: "b", tool: "pass", dependsOn: ["c"] }], ctx);
    expect(cycle.ok).toBe(false);
    if (cycle.ok) return;
    expect(cycle.issues).toHaveLength(1);
    expect(cycle.issues[0]!.message).toMatch(/dependency cycle/);
    expect(cycle.issues[0]!.path).toMatch(/^(steps\.0|plan\.steps\.2)/);
  });

  it("requires the failed step's id once, and new ids for every other step", () => {
    expect(repairPlan(plan, 1, [{ tool: "pass" }], ctx)).toMatchObject({
      ok: false,
      issues: [
        { path: "steps.0.id", message: "a repair step needs an id" },
        {
          path: "steps",
          message: 'the repair has no step "b" (the failed step\'s new definition)',
        },
      ],
    });
    const b = { id: "b", tool: "pass" };
    expect(repairPlan(plan, 1, [b, b], ctx)).toMatchObject({
      ok: false,
      issues: [{ path: "steps.1.id", message: '"b" is defined twice' }],
    });
    const n1 = { id: "n1", tool: "pass" };
    expect(repairPlan(plan, 1, [b, n1, n1], ctx)).toMatchObject({
      ok: false,
      issues: [
        { path: "steps.2.id", message: '"n1" is defined twice in the repair (also steps.1)' },
      ],
    });
    expect(repairPlan(plan, 1, [b, { id: "a", tool: "pass" }], ctx)).toMatchObject({
      ok: false,
      issues: [{ path: "steps.1.id", message: expect.stringContaining('step "a" already exists') }],
    });
  });

  it("keeps MAX_STEPS_PER_PLAN", () => {
    const many = Array.from({ length: 8 }, (_, k) => ({ id: `x${k}`, tool: "pass" }));
    const result = repairPlan(plan, 1, [{ id: "b", tool: "pass" }, ...many], ctx);
    expect(result).toMatchObject({ ok: false, issues: [{ path: "plan.steps" }] });
  });

  it("readRepairAnswer reports the shape a body means", () => {
    expect(readRepairAnswer({ giveUp: true, steps: [] })).toMatchObject({
      ok: false,
      issues: [{ path: "steps", message: 'unknown field "steps"' }],
    });
    expect(readRepairAnswer({ steps: [{ id: "b", tool: "pass", dependOn: ["a"] }] })).toEqual({
      ok: true,
      // kept as written: the merged plan's validation reports the typo
      answer: { steps: [{ id: "b", tool: "pass", dependOn: ["a"] }] },
    });
  });

  it("diagnose names the step, its call and how it failed", () => {
    const step = compiled({
      steps: [
        { id: "s", tool: "http", params: { url: "https://a.example.com/x", method: "POST" } },
      ],
    }).steps[0]!;
    expect(diagnose(step, failedVerify, 2)).toBe(
      'step "s" (http POST https://a.example.com/x) failed for good after 2 attempts with verification_failed: verify failed',
    );
  });
});

describe("the scheduler and a repair (SPEC 9.2)", () => {
  const one = (mode: "url" | "human"): CompiledPlan => ({
    name: null,
    input: null,
    tags: {},
    config: configSchema.parse({}),
    replan: replanSchema.parse(mode === "human" ? { mode } : { url: "https://p.example.com" }),
    steps: [0, 1].map((i) => ({
      index: i,
      id: `s${i}`,
      tool: "pass",
      params: {},
      deps: i === 0 ? [] : [0],
      refs: [],
      trigger: "all_success" as const,
      retry: DEFAULT_RETRY,
      timeoutMs: 30_000,
      onFailure: "continue" as const,
    })),
  });
  const rows = [
    { status: "pending" as const, nextAttemptAt: null, waitingFor: null },
    { status: "pending" as const, nextAttemptAt: null, waitingFor: null },
  ];
  const mode = { type: "continuous" as const, maxIterations: 10 };

  it("a planner's repair is a timer wait: the run sleeps until the call is due, dependents wait", () => {
    const s = createScheduler(one("url"), rows);
    decide(s, 0);
    settle(s, 0, { type: "wait", at: 5_000, for: "replan" });
    const { next } = decide(s, 0);
    expect(next).toEqual({ type: "sleep", until: 5_000 });
    expect(onlyWaitingForAnswers(s)).toBe(false);
    expect(s.status).toEqual(["waiting", "pending"]);
    const due = decide(s, 5_000);
    expect(due.actions).toEqual([{ type: "resume", step: 0 }]);
  });

  it("a person's repair is an answer wait: the run is waiting", () => {
    const s = createScheduler(one("human"), rows);
    decide(s, 0);
    settle(s, 0, { type: "wait", at: null, for: "replan" });
    expect(onlyWaitingForAnswers(s)).toBe(true);
    const { next } = decide(s, 0);
    expect(next.type).toBe("sleep");
    expect(endIteration(s, next as never, mode, { iterations: 1, iterationBudget: null })).toEqual({
      type: "wait_for_answers",
    });
  });

  it("an applied repair ends the iteration so that the next one runs the new plan", () => {
    const s = createScheduler(one("human"), rows);
    decide(s, 0);
    settle(s, 0, { type: "wait", at: null, for: "replan" });
    settle(s, 0, { type: "replanned" });
    expect(s.status).toEqual(["pending", "pending"]);
    const { actions, next } = decide(s, 0);
    expect(actions).toEqual([]);
    expect(endIteration(s, next as never, mode, { iterations: 1, iterationBudget: null })).toEqual({
      type: "again",
    });
  });
});
