import { describe, expect, it } from "vitest";
import { UNREADABLE_OUTPUT, readStoredOutput, storedOutput } from "./output";

const limits = { maxOutputBytes: 1000, maxOutputDepth: 3 };
const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);

describe("storedOutput", () => {
  it("stores JSON at the limits: bytes and nesting", () => {
    expect(storedOutput(nest(3), limits)).toEqual({ ok: true, json: "[[[1]]]" });
    expect(storedOutput(undefined, limits)).toEqual({ ok: true, json: "null" });
    expect(storedOutput("x".repeat(998), limits).ok).toBe(true);
  });

  it("fails a deeper output as invalid_data, and a larger one as output_too_large", () => {
    expect(storedOutput(nest(4), limits)).toEqual({
      ok: false,
      error: {
        category: "invalid_data",
        message: "output is nested deeper than 3 levels (MAX_OUTPUT_DEPTH)",
      },
    });
    expect(storedOutput("x".repeat(999), limits)).toEqual({
      ok: false,
      error: {
        category: "output_too_large",
        message: "output is 1001 bytes, more than MAX_OUTPUT_BYTES (1000)",
      },
    });
  });

  it("allows a forEach item one level less: the step's data wraps it in an array", () => {
    expect(storedOutput(nest(2), limits, true).ok).toBe(true);
    expect(storedOutput(nest(3), limits, true)).toEqual({
      ok: false,
      error: {
        category: "invalid_data",
        message:
          "item output is nested deeper than 2 levels (MAX_OUTPUT_DEPTH 3, less one for the step's array)",
      },
    });
  });

  it("a value so deep that JSON.stringify overflows is invalid_data, not a crash", () => {
    let v: unknown = 1;
    for (let k = 0; k < 1_000_000; k++) v = [v];
    expect(storedOutput(v, { ...limits, maxOutputBytes: 10_000_000 })).toMatchObject({
      ok: false,
      error: { category: "invalid_data" },
    });
  });
});

describe("readStoredOutput", () => {
  it("parses what was stored, and shows a placeholder for what no read could carry", () => {
    expect(readStoredOutput('{"a":[1]}')).toEqual({ a: [1] });
    const arrays = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(readStoredOutput(arrays(1000))).not.toBe(UNREADABLE_OUTPUT);
    expect(readStoredOutput(arrays(1001))).toBe(UNREADABLE_OUTPUT);
  });
});
