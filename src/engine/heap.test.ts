import { describe, expect, it } from "vitest";
import { MinHeap } from "./heap";

describe("MinHeap", () => {
  it("is empty at first", () => {
    const h = new MinHeap();
    expect(h.size).toBe(0);
    expect(h.peek()).toBeUndefined();
    expect(h.pop()).toBeUndefined();
  });

  it("peeks the smallest without removing it", () => {
    const h = new MinHeap();
    h.push(30, 3);
    h.push(10, 1);
    h.push(20, 2);
    expect(h.peek()).toEqual([10, 1]);
    expect(h.size).toBe(3);
  });

  it("pops in ascending order of time", () => {
    const h = new MinHeap();
    const times = [50, 10, 40, 10, 30, 20, 0, 60, 5];
    times.forEach((t, i) => h.push(t, i));
    const out: number[] = [];
    for (let top = h.pop(); top; top = h.pop()) out.push(top[0]);
    expect(out).toEqual([...times].sort((a, b) => a - b));
    expect(h.size).toBe(0);
  });

  it("keeps order through interleaved pushes and pops", () => {
    const h = new MinHeap();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const mirror: number[] = [];
    for (let k = 0; k < 2000; k++) {
      if (mirror.length > 0 && rand() < 0.4) {
        mirror.sort((a, b) => a - b);
        expect(h.pop()![0]).toBe(mirror.shift());
      } else {
        const t = Math.floor(rand() * 1000);
        h.push(t, k);
        mirror.push(t);
      }
      expect(h.size).toBe(mirror.length);
    }
  });

  it("carries each value with its time", () => {
    const h = new MinHeap();
    h.push(2, 200);
    h.push(1, 100);
    expect(h.pop()).toEqual([1, 100]);
    expect(h.pop()).toEqual([2, 200]);
  });
});
