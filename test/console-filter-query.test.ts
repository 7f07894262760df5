/** The runs list's filters kept in its address (console/src/pages/filter-query.ts). */
import { describe, expect, it } from "vitest";
import { filtersOfQuery, queryOfFilters } from "../console/src/pages/filter-query";

describe("the runs list's filters in the query", () => {
  it("writes only the filters set, and reads them back as typed", () => {
    const f = { status: "failed", name: "nightly build", tags: 'env:"eu west", team:blue' };
    const query = queryOfFilters(f);
    expect(query).toBe("?status=failed&name=nightly+build&tags=env%3A%22eu+west%22%2C+team%3Ablue");
    expect(filtersOfQuery(query)).toEqual(f);
    expect(queryOfFilters({ status: "", name: "", tags: "" })).toBe("");
    expect(queryOfFilters({ status: "", name: "", tags: "a:b" })).toBe("?tags=a%3Ab");
  });

  it("reads a missing or foreign parameter as no filter", () => {
    expect(filtersOfQuery("")).toEqual({ status: "", name: "", tags: "" });
    expect(filtersOfQuery("?other=1&name=x")).toEqual({ status: "", name: "x", tags: "" });
  });
});
