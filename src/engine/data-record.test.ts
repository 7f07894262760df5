import { describe, expect, it } from "vitest";
import { z } from "zod";
import { dataRecord } from "./data-record";

describe("dataRecord", () => {
  const strings = dataRecord(z.string().max(3));

  it("returns the object as given, __proto__ and constructor keys included", () => {
    const input = JSON.parse('{"__proto__":"p","constructor":"c","a":"x"}');
    const parsed = strings.parse(input);
    expect(parsed).toBe(input);
    expect(Object.keys(parsed)).toEqual(["__proto__", "constructor", "a"]);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
  });

  it("z.record, by contrast, drops a __proto__ key (why this schema exists)", () => {
    const input = JSON.parse('{"__proto__":"p","a":"x"}');
    expect(Object.keys(z.record(z.string(), z.string()).parse(input))).toEqual(["a"]);
  });

  it("reports a bad value at its key, __proto__ too", () => {
    const result = strings.safeParse(JSON.parse('{"ok":"abc","__proto__":"toolong"}'));
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path)).toEqual([["__proto__"]]);
  });

  it.each([
    ["a string", "x", "string"],
    ["an array", [], "array"],
    ["null", null, "null"],
  ])("rejects %s", (_, value, type) => {
    const result = strings.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toBe(`expected an object, received ${type}`);
  });

  it("documents itself in JSON Schema like z.record (as the plan's schema and OpenAPI render it)", () => {
    const options = { unrepresentable: "any" } as const;
    const doc = z.toJSONSchema(dataRecord(z.unknown()), options);
    expect(doc).toEqual(z.toJSONSchema(z.record(z.string(), z.unknown()), options));
  });
});
