import { describe, expect, it } from "vitest";
import { splitText } from "./plan-table";

describe("splitText (the stored plan's parts)", () => {
  it("cuts into parts of at most the size that join back to the text", () => {
    const text = "abcdefghij".repeat(7);
    const parts = splitText(text, 16);
    expect(parts.join("")).toBe(text);
    expect(parts.every((p) => p.length <= 16)).toBe(true);
    expect(parts).toHaveLength(5);
  });

  it("never cuts a surrogate pair in two", () => {
    const text = "a" + "😀".repeat(20); // each emoji is two UTF-16 code units
    const parts = splitText(text, 4);
    expect(parts.join("")).toBe(text);
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const p of parts) expect(p).not.toMatch(loneSurrogate);
  });

  it("an empty text has no parts", () => {
    expect(splitText("", 8)).toEqual([]);
  });
});
