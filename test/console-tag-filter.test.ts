/** The runs list's tag box (console/src/pages/tag-filter.ts): quoted values may hold spaces and commas. */
import { describe, expect, it } from "vitest";
import { parseTagFilter } from "../console/src/pages/tag-filter";

describe("parseTagFilter", () => {
  it("splits filters on spaces and commas", () => {
    expect(parseTagFilter(" team:blue, tier:1 ,,  x:y ")).toEqual(["team:blue", "tier:1", "x:y"]);
    expect(parseTagFilter("")).toEqual([]);
  });

  it("keeps a quoted value (or a quoted filter) whole, spaces and commas included", () => {
    expect(parseTagFilter('env:"eu west" team:blue')).toEqual(["env:eu west", "team:blue"]);
    expect(parseTagFilter('"env:eu west",owner:"a, b"')).toEqual(["env:eu west", "owner:a, b"]);
    expect(parseTagFilter('env:""')).toEqual(["env:"]);
  });

  it('reads \\" and \\\\ inside quotes, and an unclosed quote to the end', () => {
    expect(parseTagFilter('q:"say \\"hi\\" \\\\ bye"')).toEqual(['q:say "hi" \\ bye']);
    expect(parseTagFilter('env:"eu west')).toEqual(["env:eu west"]);
  });
});
