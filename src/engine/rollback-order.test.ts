import { describe, expect, it } from "vitest";
import { rollbackOrder } from "./rollback-order";

describe("rollbackOrder", () => {
  it("undoes the step that completed last first", () => {
    const done = [
      { index: 0, endedAt: 100 },
      { index: 1, endedAt: 300 },
      { index: 2, endedAt: 200 },
    ];
    expect(rollbackOrder(done, [[], [], []])).toEqual([1, 2, 0]);
  });

  it("of steps that ended in the same millisecond, undoes dependents before what they depend on, whatever the plan order", () => {
    // c (index 0) depends on b (1), which depends on a (2): they completed a, b, c.
    const deps = [[1], [2], []];
    const done = [0, 1, 2].map((index) => ({ index, endedAt: 500 }));
    expect(rollbackOrder(done, deps)).toEqual([0, 1, 2]);
    // d (3) depends on a (2) only: it too is undone before a.
    const order = rollbackOrder([...done, { index: 3, endedAt: 500 }], [...deps, [2]]);
    expect(order.indexOf(3)).toBeLessThan(order.indexOf(2));
    expect(order.indexOf(0)).toBeLessThan(order.indexOf(1));
    expect(order.indexOf(1)).toBeLessThan(order.indexOf(2));
  });

  it("keeps a fixed order for unrelated steps that tie", () => {
    const done = [0, 1, 2].map((index) => ({ index, endedAt: 7 }));
    expect(rollbackOrder(done, [[], [], []])).toEqual([2, 1, 0]);
  });
});
