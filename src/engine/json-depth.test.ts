import { describe, expect, it } from "vitest";
import { jsonTextTooDeep, pathDeeperThan } from "./json-depth";

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("jsonTextTooDeep", () => {
  it.each([
    ["1", 0, false],
    ['"a"', 0, false],
    ["{}", 0, true],
    ["{}", 1, false],
    ['{"a":[1,{"b":2}]}', 3, false],
    ['{"a":[1,{"b":2}]}', 2, true],
    ["[[1],[2],[3]]", 2, false],
  ])("%s with max %i -> %s", (text, max, expected) => {
    expect(jsonTextTooDeep(text, max)).toBe(expected);
  });

  it("bites just past the limit", () => {
    expect(jsonTextTooDeep(arrays(128), 128)).toBe(false);
    expect(jsonTextTooDeep(arrays(129), 128)).toBe(true);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ s: '[[[{{{\\"[[[', t: ["\\", '"]]]'], u: "\\\\" });
    expect(JSON.parse(text)).toBeTruthy();
    expect(jsonTextTooDeep(text, 2)).toBe(false);
    expect(jsonTextTooDeep(text, 1)).toBe(true);
  });

  it("scans a million levels without recursion", () => {
    expect(jsonTextTooDeep(arrays(1_000_000), 1000)).toBe(true);
    expect(jsonTextTooDeep(arrays(1_000_000), 1_000_000)).toBe(false);
  });

  it("terminates on text that is not JSON (an unclosed string)", () => {
    expect(jsonTextTooDeep('["abc', 0)).toBe(true);
    expect(jsonTextTooDeep('"abc', 0)).toBe(false);
  });
});

describe("pathDeeperThan", () => {
  it("names the first value past the limit, iteratively", () => {
    expect(pathDeeperThan({ a: { b: [1] } }, 3)).toBeNull();
    expect(pathDeeperThan({ a: { b: [1] } }, 2)).toBe("a.b");
    let v: unknown = 1;
    for (let k = 0; k < 100_000; k++) v = [v];
    expect(pathDeeperThan(v, 1)).toBe("0");
  });
});
