/**
 * The listing feed (SPEC 8.2) on a real checkpoint, its index a recorder: progress alone waits
 * for COALESCE_MS (5 s), but a new status is sent at once even while that timer is pending.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "../../src/engine/plan";
import { configSchema } from "../../src/engine/plan-schema";
import type { ListingEntry } from "../../src/engine/listing";
import { unique, until } from "../../test/helpers";
import { Checkpoint } from "../storage/checkpoint";
import { IndexFeed } from "./index-feed";

const plan = {
  name: "feed",
  input: null,
  tags: {},
  config: configSchema.parse({}),
  steps: [
    { index: 0, id: "a", tool: "pass" },
    { index: 1, id: "b", tool: "pass" },
  ],
} as unknown as CompiledPlan;

describe("IndexFeed", () => {
  it("sends a new status at once while progress waits for its 5 s", async () => {
    const stub = env.RUNS.get(env.RUNS.idFromName(unique("feed")));
    await runInDurableObject(stub, async (_, state) => {
      const c = new Checkpoint(state.storage);
      const run = { id: "run_feed", owner: "feed", now: Date.now(), baseUrl: "http://x" };
      c.create({ ...run, riskGate: [], plan });
      const sent: ListingEntry[] = [];
      const feed = new IndexFeed({
        checkpoint: c,
        index: () => ({
          upsert: async (entry) => {
            sent.push(entry);
            return "stored" as const;
          },
          remove: async () => {},
        }),
        now: () => Date.now(),
        beside: () => {},
        rearm: async () => {},
      });
      c.changes.listen(() => feed.touch());
      c.changes.listenForStatus(() => feed.statusWritten());
      const statuses = () => sent.map((e) => e.status);

      await feed.publish();
      c.run.beginIteration(1, Date.now());
      await until(async () => statuses().at(-1) === "running", "running is listed");
      // Progress alone: due 5 s after the last update, a timer waits for it.
      c.steps.attemptStarted(0, 1, Date.now());
      c.steps.succeeded(0, 1, "1", null, 1, Date.now());
      c.flush();
      await scheduler.wait(50); // the feed looked: its next look is 5 s away
      expect(statuses()).toEqual(["pending", "running"]);
      c.run.finish("failed", Date.now());
      await until(async () => statuses().at(-1) === "failed", "failed is listed", 150);
      expect(statuses()).toEqual(["pending", "running", "failed"]);
    });
  });
});
