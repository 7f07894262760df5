/**
 * RunIndex (SPEC 8.2), through its RPC surface, on an index of its own per test: updates are
 * idempotent and ordered by the run's version, a removed run never comes back, and the
 * stats follow every change.
 */
import { describe, expect, it } from "vitest";
import type { ListingEntry } from "../src/engine/listing";
import { unique } from "./helpers";
import { indexStub } from "./listing-helpers";

let n = 0;
function entry(overrides: Partial<ListingEntry> = {}): ListingEntry {
  return {
    runId: `run_${(n++).toString(16).padStart(32, "0")}`,
    version: 1,
    name: "n",
    status: "pending",
    createdAt: Date.parse("2026-11-01T00:00:00Z") + n,
    startedAt: null,
    endedAt: null,
    tags: { team: "a" },
    counts: { total: 2, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 },
    ...overrides,
  };
}

const page = { limit: 50 };

describe("RunIndex", () => {
  it("keeps the newest version of an entry: an older or repeated update changes nothing", async () => {
    const index = indexStub(unique("owner"));
    const e = entry();
    expect(await index.upsert(e)).toBe("stored");
    const done = { ...e, version: 5, status: "completed" as const, endedAt: e.createdAt + 9 };
    expect(await index.upsert({ ...done, counts: { ...e.counts, succeeded: 2 } })).toBe("stored");
    expect(await index.upsert({ ...e, version: 3, status: "running" })).toBe("stale");
    expect(await index.upsert({ ...done, counts: { ...e.counts, succeeded: 2 } })).toBe("stale");
    const { runs } = await index.list(page);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      runId: e.runId,
      status: "completed",
      progress: { completedSteps: 2, totalSteps: 2, percentage: 100 },
    });
    expect(await index.stats()).toEqual({ total: 1, byStatus: { completed: 1 } });
  });

  it("updates sent together are stored together, each answered, and a list sent with them sees them", async () => {
    const index = indexStub(unique("owner"));
    const entries = Array.from({ length: 20 }, () => entry());
    const first = entries[0]!;
    const [outcomes, listed] = await Promise.all([
      Promise.all([
        ...entries.map((e) => index.upsert(e)),
        index.upsert({ ...first, version: 2, status: "running" }),
        index.upsert({ ...first, version: 1, status: "failed" }),
      ]),
      index.list({ limit: 200 }),
    ]);
    expect(outcomes).toEqual([...entries.map(() => "stored"), "stored", "stale"]);
    expect(listed.runs).toHaveLength(20);
    expect(await index.stats()).toEqual({ total: 20, byStatus: { pending: 19, running: 1 } });
  });

  it("never brings back a removed run: a late update of it is ignored", async () => {
    const index = indexStub(unique("owner"));
    const kept = entry();
    const gone = entry();
    await index.upsert(kept);
    await index.upsert(gone);
    await index.remove(gone.runId);
    await index.remove(gone.runId); // again: nothing changes
    expect(await index.upsert({ ...gone, version: 99, status: "failed" })).toBe("removed");
    expect((await index.list(page)).runs.map((r) => r.runId)).toEqual([kept.runId]);
    expect((await index.list({ ...page, tags: [{ key: "team", value: "a" }] })).runs).toHaveLength(
      1,
    );
    expect(await index.stats()).toEqual({ total: 1, byStatus: { pending: 1 } });
  });

  it("counts runs per status as they are added, change status and are removed", async () => {
    const index = indexStub(unique("owner"));
    expect(await index.stats()).toEqual({ total: 0, byStatus: {} });
    const [a, b, c] = [entry(), entry(), entry()];
    for (const e of [a, b, c]) await index.upsert(e);
    await index.upsert({ ...a, version: 2, status: "running" });
    await index.upsert({ ...b, version: 2, status: "failed" });
    await index.upsert({ ...b, version: 3, counts: { ...b.counts, failed: 1 }, status: "failed" });
    expect(await index.stats()).toEqual({
      total: 3,
      byStatus: { pending: 1, running: 1, failed: 1 },
    });
    await index.remove(c.runId);
    expect(await index.stats()).toEqual({ total: 2, byStatus: { running: 1, failed: 1 } });
  });

  it("an index holds only its own key's runs", async () => {
    const [mine, theirs] = [indexStub(unique("owner")), indexStub(unique("owner"))];
    const e = entry();
    await mine.upsert(e);
    expect((await theirs.list(page)).runs).toEqual([]);
    expect(await theirs.stats()).toEqual({ total: 0, byStatus: {} });
    expect((await mine.list(page)).runs.map((r) => r.runId)).toEqual([e.runId]);
  });
});
