import { describe, expect, it } from "vitest";
import { submit } from "./helpers";

describe("input limits", () => {
  it("rejects JSON nested deeper than MAX_JSON_DEPTH (default 64), naming where", async () => {
    let value: unknown = 1;
    for (let i = 0; i < 200; i++) value = [value];
    const { res, body } = await submit({ steps: [{ tool: "pass", params: { value } }] });
    expect(res.status).toBe(400);
    expect(body.error.issues[0].path).toMatch(/^steps\.0\.params\.value(\.0)+$/);
    expect(body.error.issues[0].message).toMatch(/MAX_JSON_DEPTH/);
  });

  it("survives nesting far deeper than a recursive parser could", async () => {
    const { res } = await submit(`{"steps":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
    expect(res.status).toBe(400);
  });

  it("rejects a template expression longer than MAX_TEMPLATE_LENGTH (default 1024)", async () => {
    const expr = `input${".a".repeat(600)}`;
    const { res, body } = await submit({
      steps: [{ tool: "pass", params: { value: `\${${expr}}` } }],
    });
    expect(res.status).toBe(400);
    expect(body.error.issues[0].path).toBe("steps.0.params.value");
    expect(body.error.issues[0].message).toMatch(/MAX_TEMPLATE_LENGTH/);
  });

  it("fails a step whose output is larger than MAX_OUTPUT_BYTES, and only that step", async () => {
    const { execute } = await import("./helpers");
    const big = "x".repeat(300_000);
    const run = await execute({
      steps: [
        { id: "big", tool: "pass", params: { value: big } },
        { id: "small", tool: "pass", params: { value: 1 } },
      ],
    });
    expect(run.status).toBe("partial");
    const big0 = run.steps.find((s: any) => s.id === "big");
    expect(big0.error.category).toBe("output_too_large");
    expect(run.steps.find((s: any) => s.id === "small").status).toBe("succeeded");
  });
});
