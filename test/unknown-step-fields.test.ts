/**
 * Unknown step fields through the API: a typo of a known field is a 400 with a suggestion and
 * stores nothing; other unknown fields are accepted and listed as `warnings` in the 202 and in
 * the validate answer, and they change nothing about the run.
 */
import { describe, expect, it } from "vitest";
import { idempotentRunId } from "../src/ids";
import { api, drive, submit, unique } from "./helpers";

const validate = async (plan: unknown) => {
  const res = await api("/v1/plans/validate", { method: "POST", body: JSON.stringify(plan) });
  return { status: res.status, body: (await res.json()) as any };
};

describe("unknown step fields", () => {
  it("a typo of dependsOn is a 400 naming the field and the likely one, and no run is stored", async () => {
    const plan = {
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "pass", dependOn: ["a"] },
      ],
    };
    const key = unique("typo");
    const { res, body } = await submit(plan, { "idempotency-key": key });
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({
      code: "invalid_plan",
      issues: [
        {
          path: "steps.1.dependOn",
          message: 'unknown step field "dependOn": did you mean "dependsOn"?',
        },
      ],
    });
    expect(body.error.message).toContain('did you mean "dependsOn"');
    expect((await api(`/v1/runs/${await idempotentRunId("public", key)}`)).status).toBe(404);
    expect(await validate(plan)).toEqual({ status: 400, body });
  });

  it("other unknown fields are accepted, ignored and returned as warnings with their paths", async () => {
    const plan = {
      steps: [
        { id: "a", tool: "pass", params: { value: 1 }, rationale: "the agent's reason" },
        { id: "b", tool: "pass", dependsOn: ["a"], notes: { by: "planner" } },
      ],
    };
    const warnings = [
      { path: "steps.0.rationale", message: 'unknown step field "rationale" was ignored' },
      { path: "steps.1.notes", message: 'unknown step field "notes" was ignored' },
    ];
    const { res, body } = await submit(plan);
    expect(res.status).toBe(202);
    expect(body.warnings).toEqual(warnings);
    expect((await validate(plan)).body.warnings).toEqual(warnings);
    const done = await drive(body.runId);
    expect(done.status).toBe("completed");
  });

  it("answers without warnings when every field is known", async () => {
    const plan = {
      steps: [{ id: "a", tool: "pass", title: "t", description: "d", parallel: true }],
    };
    const { res, body } = await submit(plan);
    expect(res.status).toBe(202);
    expect(body).not.toHaveProperty("warnings");
    expect((await validate(plan)).body).not.toHaveProperty("warnings");
  });
});
