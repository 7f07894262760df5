import { describe, expect, it } from "vitest";
import {
  criticalPath,
  dependentsOf,
  findCycle,
  findCycles,
  heightsOf,
  levelsOf,
  topologicalOrder,
} from "./graph";

type Deps = number[][];

/** deps[i] = the steps i waits for. */
const diamond: Deps = [[], [0], [0], [1, 2]];

function expectValidOrder(deps: Deps, order: number[] | null): void {
  expect(order).not.toBeNull();
  expect([...order!].sort((a, b) => a - b)).toEqual(deps.map((_, i) => i));
  const pos = new Map(order!.map((v, k) => [v, k]));
  deps.forEach((ds, i) => ds.forEach((d) => expect(pos.get(d)!).toBeLessThan(pos.get(i)!)));
}

/** Every consecutive pair is an edge (cycle[k] depends on cycle[k+1]) and it closes on itself. */
function expectValidCycle(deps: Deps, cycle: number[] | null): void {
  expect(cycle).not.toBeNull();
  expect(cycle!.length).toBeGreaterThanOrEqual(2);
  expect(cycle![0]).toBe(cycle![cycle!.length - 1]);
  for (let k = 0; k + 1 < cycle!.length; k++) expect(deps[cycle![k]!]).toContain(cycle![k + 1]);
  expect(new Set(cycle).size).toBe(cycle!.length - 1);
}

const chain = (n: number): Deps => Array.from({ length: n }, (_, i) => (i === 0 ? [] : [i - 1]));
/** A chain declared backwards: step i waits for i + 1, so a DFS from 0 goes n deep. */
const backwardChain = (n: number): Deps =>
  Array.from({ length: n }, (_, i) => (i === n - 1 ? [] : [i + 1]));

describe("topologicalOrder", () => {
  it("puts every dependency before its dependents", () => {
    expectValidOrder(diamond, topologicalOrder(diamond));
  });

  it("orders a backwards-declared chain from its last step", () => {
    expect(topologicalOrder(backwardChain(4))).toEqual([3, 2, 1, 0]);
  });

  it("keeps independent steps", () => {
    expectValidOrder([[], [], []], topologicalOrder([[], [], []]));
  });

  it("returns null on a cycle", () => {
    expect(topologicalOrder([[], [2], [1]])).toBeNull();
  });

  it("returns null on a self-loop", () => {
    expect(topologicalOrder([[0]])).toBeNull();
  });

  it("handles an empty plan", () => {
    expect(topologicalOrder([])).toEqual([]);
  });
});

describe("dependentsOf", () => {
  it("inverts the dependency lists", () => {
    expect(dependentsOf(diamond)).toEqual([[1, 2], [3], [3], []]);
  });
});

describe("findCycle", () => {
  it("is null for a DAG", () => {
    expect(findCycle(diamond)).toBeNull();
  });

  it("names a three-step cycle", () => {
    const deps: Deps = [[1], [2], [0]];
    const cycle = findCycle(deps);
    expectValidCycle(deps, cycle);
    expect(new Set(cycle)).toEqual(new Set([0, 1, 2]));
  });

  it("leaves out steps that only lead into the cycle", () => {
    // 0 -> 1 -> 2 -> 3 -> 1, and 4 waits for 0.
    const deps: Deps = [[1], [2], [3], [1], [0]];
    const cycle = findCycle(deps);
    expectValidCycle(deps, cycle);
    expect(new Set(cycle)).toEqual(new Set([1, 2, 3]));
  });

  it("finds a cycle that does not contain step 0", () => {
    const deps: Deps = [[], [0, 2], [1]];
    const cycle = findCycle(deps);
    expectValidCycle(deps, cycle);
    expect(new Set(cycle)).toEqual(new Set([1, 2]));
  });

  it("names a self-loop", () => {
    expect(findCycle([[], [1]])).toEqual([1, 1]);
  });
});

describe("levelsOf", () => {
  it("groups a diamond in three levels", () => {
    const order = topologicalOrder(diamond)!;
    expect(levelsOf(diamond, order).map((l) => [...l].sort())).toEqual([[0], [1, 2], [3]]);
  });

  it("places a step one past its deepest dependency", () => {
    // 3 waits for 0 (level 0) and 2 (level 2).
    const deps: Deps = [[], [0], [1], [0, 2]];
    expect(levelsOf(deps, topologicalOrder(deps)!)).toEqual([[0], [1], [2], [3]]);
  });

  it("puts independent steps on level 0", () => {
    expect(levelsOf([[], [], []], [0, 1, 2])).toEqual([[0, 1, 2]]);
  });
});

describe("heightsOf", () => {
  it("counts the longest chain of dependents below each step", () => {
    // 0 -> 1 -> 2 -> 4 and 0 -> 3 -> 4: 0 heads a chain of four steps, 3 one of two.
    const deps: Deps = [[], [0], [1], [0], [2, 3]];
    expect([...heightsOf(deps, topologicalOrder(deps)!)]).toEqual([4, 3, 2, 2, 1]);
  });

  it("follows dependencies listed after their dependents", () => {
    // 0 waits for 2, which waits for 1.
    const deps: Deps = [[2], [], [1]];
    expect([...heightsOf(deps, topologicalOrder(deps)!)]).toEqual([1, 3, 2]);
  });

  it("is 1 for independent steps", () => {
    expect([...heightsOf([[], []], [0, 1])]).toEqual([1, 1]);
  });
});

describe("criticalPath", () => {
  it("is the longest chain by step count", () => {
    // 0 -> 1 -> 2 -> 4 is longer than 0 -> 3 -> 4.
    const deps: Deps = [[], [0], [1], [0], [2, 3]];
    expect(criticalPath(deps, topologicalOrder(deps)!)).toEqual({ path: [0, 1, 2, 4], length: 4 });
  });

  it("follows weights when given", () => {
    const deps: Deps = [[], [0], [1], [0], [2, 3]];
    const weight = (i: number) => (i === 3 ? 10 : 1);
    expect(criticalPath(deps, topologicalOrder(deps)!, weight)).toEqual({
      path: [0, 3, 4],
      length: 12,
    });
  });

  it("is one step for independent steps", () => {
    expect(criticalPath([[], []], [0, 1]).length).toBe(1);
  });

  it("is empty for an empty plan", () => {
    expect(criticalPath([], [])).toEqual({ path: [], length: 0 });
  });
});

describe("10,000-step graphs", () => {
  const n = 10_000;

  it("orders a chain", () => {
    const order = topologicalOrder(chain(n));
    expect(order).toHaveLength(n);
    expect(order![n - 1]).toBe(n - 1);
  });

  it("finds no cycle in a backwards chain without overflowing the stack", () => {
    expect(findCycle(backwardChain(n))).toBeNull();
  });

  it("finds a 10,000-step cycle", () => {
    const deps = backwardChain(n);
    deps[n - 1] = [0];
    const cycle = findCycle(deps);
    expect(cycle).toHaveLength(n + 1);
    expectValidCycle(deps, cycle);
  });

  it("names one cycle per group: a 10,000-step ring, and 5,000 two-step cycles up to the cap", () => {
    const ring = backwardChain(n);
    ring[n - 1] = [0];
    const [cycle, ...more] = findCycles(ring);
    expect(more).toEqual([]);
    expectValidCycle(ring, cycle!);
    const pairs: Deps = Array.from({ length: n }, (_, i) => [i ^ 1]);
    const found = findCycles(pairs);
    expect(found).toHaveLength(20);
    found.forEach((c, k) =>
      expect([...c].sort((a, b) => a - b)).toEqual([2 * k, 2 * k, 2 * k + 1]),
    );
  });

  it("computes levels and the critical path of a chain", () => {
    const deps = chain(n);
    const order = topologicalOrder(deps)!;
    expect(levelsOf(deps, order)).toHaveLength(n);
    const cp = criticalPath(deps, order);
    expect(cp.length).toBe(n);
    expect(cp.path[0]).toBe(0);
    expect(cp.path[n - 1]).toBe(n - 1);
  });
});
