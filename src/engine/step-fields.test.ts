import { describe, expect, it } from "vitest";
import { checkStepFields, closestStepField } from "./step-fields";
import { compilePlan, type ValidationContext } from "./validate";

const ctx: ValidationContext = {
  maxSteps: 100,
  tool: (name) => (name === "pass" ? {} : undefined),
  checkUrl: () => null,
};

describe("closestStepField", () => {
  it.each([
    ["dependOn", "dependsOn"],
    ["dependson", "dependsOn"],
    ["DependsOn", "dependsOn"],
    ["depends-on", "dependsOn"],
    ["depends", "dependsOn"],
    ["dpeendsOn", "dependsOn"],
    ["timeout", "timeoutMs"],
    ["for_each", "forEach"],
    ["foreach", "forEach"],
    ["param", "params"],
    ["tools", "tool"],
    ["ID", "id"],
    ["readOnly", "readonly"],
    ["on_failure", "onFailure"],
    ["maxconcurrency", "maxConcurrency"],
  ])("%s is a typo of %s", (typed, known) => {
    expect(closestStepField(typed)).toBe(known);
  });

  it.each([
    ["dependencies", "dependsOn"],
    ["needs", "dependsOn"],
    ["riskLevel", "risk"],
    ["risk_level", "risk"],
    ["toolName", "tool"],
    ["toolArgs", "params"],
    ["if", "when"],
    ["condition", "when"],
  ])("%s is another executor's name for %s", (field, known) => {
    expect(closestStepField(field)).toBe(known);
  });

  it.each(["notes", "comment", "rationale", "owner", "idx", "x-agent", "type", "constructor"])(
    "%s is too far from every field to be a typo",
    (field) => {
      expect(closestStepField(field)).toBeUndefined();
    },
  );
});

describe("checkStepFields", () => {
  it("sorts unknown fields into typos (with a suggestion) and warnings, by path", () => {
    const findings = checkStepFields({
      steps: [
        { id: "a", tool: "pass", notes: "from the agent" },
        { id: "b", tool: "pass", dependOn: ["a"], rationale: "why" },
      ],
    });
    expect(findings.typos).toEqual([
      {
        path: "steps.1.dependOn",
        message: 'unknown step field "dependOn": did you mean "dependsOn"?',
      },
    ]);
    expect(findings.warnings).toEqual([
      { path: "steps.0.notes", message: 'unknown step field "notes" was ignored' },
      { path: "steps.1.rationale", message: 'unknown step field "rationale" was ignored' },
    ]);
  });

  it("finds nothing in a plan of known fields, or in one whose steps are not objects", () => {
    expect(checkStepFields({ steps: [{ id: "a", tool: "pass", title: "t" }] })).toEqual({
      typos: [],
      warnings: [],
    });
    expect(checkStepFields({ steps: [null, 3, ["x"]] })).toEqual({ typos: [], warnings: [] });
    expect(checkStepFields("not a plan")).toEqual({ typos: [], warnings: [] });
  });

  it("lists at most 100 warnings, then says how many more", () => {
    const step: Record<string, unknown> = { tool: "pass" };
    for (let i = 0; i < 150; i++) step[`note${i}x`] = i;
    const { warnings } = checkStepFields({ steps: [step] });
    expect(warnings).toHaveLength(101);
    expect(warnings.at(-1)).toEqual({
      path: "steps",
      message: "50 more unknown step fields were ignored",
    });
  });

  it("warns of a known field the step's tool does not use: timeoutMs on an approval or a wait", () => {
    const { typos, warnings } = checkStepFields({
      steps: [
        { tool: "approval", timeoutMs: 500 },
        { tool: "wait", params: { ms: 10 }, timeoutMs: 500 },
        { tool: "callback", params: { url: "https://x.test" }, timeoutMs: 500 },
        {
          tool: "wait",
          timeoutMs: 500,
          compensate: { tool: "http", params: { url: "https://x.test" } },
        },
      ],
    });
    expect(typos).toEqual([]);
    expect(warnings).toEqual([
      {
        path: "steps.0.timeoutMs",
        message:
          'timeoutMs has no effect on a step of tool "approval": an approval waits until someone answers it',
      },
      {
        path: "steps.1.timeoutMs",
        message: 'timeoutMs has no effect on a step of tool "wait": a wait lasts as its params say',
      },
    ]);
  });
});

describe("compilePlan with unknown step fields", () => {
  it("rejects a typo, alongside the plan's other issues", () => {
    const result = compilePlan(
      {
        steps: [
          { id: "a", tool: "pass" },
          { id: "b", tool: "nope", dependOn: ["a"] },
        ],
      },
      ctx,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).toEqual(["steps.1.dependOn", "steps.1.tool"]);
  });

  it("rejects a typo also when zod rejects the plan's shape", () => {
    const result = compilePlan({ steps: [{ tool: "pass", timeout: 5, trigger: "bad" }] }, ctx);
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual([
      "steps.0.timeout",
      "steps.0.trigger",
    ]);
  });

  it("accepts other unknown fields and returns them as warnings", () => {
    const result = compilePlan({ steps: [{ id: "a", tool: "pass", notes: "n" }] }, ctx);
    expect(result).toMatchObject({
      ok: true,
      warnings: [{ path: "steps.0.notes", message: expect.stringMatching(/ignored/) }],
    });
  });
});
