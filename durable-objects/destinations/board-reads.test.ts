import { describe, expect, it } from "vitest";
import { FRESH_MS, sharedBoardRead } from "./board-reads";
import type { PauseNotice } from "./pause-board";

/** A board that counts its reads, a cache of the test's own, and a clock the test moves. */
async function setup(notices: PauseNotice[]) {
  let now = 50_000;
  let reads = 0;
  const board = async () => {
    reads++;
    return notices;
  };
  const cache = await caches.open(`board-reads-${crypto.randomUUID()}`);
  const clock = () => now;
  return {
    read: sharedBoardRead(board, cache, clock),
    /** Another isolate of the same location: its own reader, the same cache. */
    other: () => sharedBoardRead(board, cache, clock),
    reads: () => reads,
    advance: (ms: number) => void (now += ms),
  };
}

describe("sharedBoardRead", () => {
  it("reads the board once for every reader of the location while the copy is fresh", async () => {
    const t = await setup([{ destination: "api.test", remainingMs: 5_000 }]);
    expect(await t.read()).toEqual([{ destination: "api.test", remainingMs: 5_000 }]);
    t.advance(400);
    expect(await t.other()()).toEqual([{ destination: "api.test", remainingMs: 4_600 }]);
    expect(t.reads()).toBe(1);
  });

  it("drops the pauses that ended since the copy was made", async () => {
    const t = await setup([
      { destination: "short.test", remainingMs: 300 },
      { destination: "long.test", remainingMs: 3_000 },
    ]);
    await t.read();
    t.advance(300);
    expect(await t.read()).toEqual([{ destination: "long.test", remainingMs: 2_700 }]);
  });

  it("reads the board again once the copy is FRESH_MS old", async () => {
    const t = await setup([]);
    await t.read();
    t.advance(FRESH_MS - 1);
    await t.read();
    expect(t.reads()).toBe(1);
    t.advance(1);
    await t.read();
    expect(t.reads()).toBe(2);
  });

  it("reads the board itself when the cache fails", async () => {
    let reads = 0;
    const board = async () => {
      reads++;
      return [];
    };
    const broken = {
      match: () => Promise.reject(new Error("cache down")),
      put: () => Promise.reject(new Error("cache down")),
    } as unknown as Cache;
    const read = sharedBoardRead(board, broken, () => 0);
    expect(await read()).toEqual([]);
    expect(await read()).toEqual([]);
    expect(reads).toBe(2);
  });
});
