import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zodIssues } from "./zod-issues";

const issuesOf = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  if (result.success) throw new Error("expected a failure");
  return zodIssues(result.error);
};

describe("zodIssues", () => {
  it("names every unknown field at its own path", () => {
    expect(issuesOf(z.strictObject({ a: z.number() }), { a: 1, b: 2, c: 3 })).toEqual([
      { path: "b", message: 'unknown field "b"' },
      { path: "c", message: 'unknown field "c"' },
    ]);
  });

  it("says what each shape of a union found wrong, rather than Invalid input", () => {
    const answer = z.union([
      z.strictObject({ output: z.unknown() }),
      z.strictObject({ error: z.strictObject({ message: z.string() }) }),
    ]);
    const [issue] = issuesOf(z.object({ body: answer }), { body: { error: {} } });
    expect(issue!.path).toBe("body");
    expect(issue!.message).toMatch(
      /^fits none of the 2 allowed shapes: \(1\) output: .*, unknown field "error"; \(2\) error\.message: /,
    );
  });
});
