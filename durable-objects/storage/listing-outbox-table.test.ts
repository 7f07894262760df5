/**
 * The listing outbox on the storage of a scratch object: a new status is written, progress
 * alone and claims are kept in memory (a restart, here a new table over the same storage,
 * forgets them and sends again), and a failure is written.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unique } from "../../test/helpers";
import { ListingOutboxTable } from "./listing-outbox-table";
import { migrate } from "./schema";
import { Sql } from "./sql";

async function withOutbox(test: (open: () => ListingOutboxTable) => void): Promise<void> {
  const stub = env.RUNS.get(env.RUNS.idFromName(unique("outbox")));
  await runInDurableObject(stub, (_, state) => {
    const db = new Sql(state.storage.sql);
    migrate(db);
    test(() => new ListingOutboxTable(db));
  });
}

describe("ListingOutboxTable", () => {
  it("writes a new status; keeps progress of the same status in memory", () =>
    withOutbox((open) => {
      const outbox = open();
      outbox.acked("s1", "running", 100);
      outbox.acked("s2", "running", 200);
      expect(outbox.read()).toMatchObject({
        ackedState: "s2",
        ackedStatus: "running",
        sentAt: 200,
      });
      expect(open().read()).toMatchObject({
        ackedState: "s1",
        ackedStatus: "running",
        sentAt: 100,
      });

      outbox.acked("s3", "completed", 300);
      expect(open().read()).toMatchObject({ ackedState: "s3", ackedStatus: "completed" });
    }));

  it("claims in memory: the claim delays the next send, a restart forgets it", () =>
    withOutbox((open) => {
      const outbox = open();
      outbox.acked("s1", "running", 100);
      outbox.claim(10_100);
      expect(outbox.read().retryAt).toBe(10_100);
      expect(open().read().retryAt).toBeNull();
      outbox.acked("s2", "running", 150);
      expect(outbox.read().retryAt).toBeNull();
    }));

  it("writes a failure, and the next acknowledgement clears it even without a new status", () =>
    withOutbox((open) => {
      const outbox = open();
      outbox.acked("s1", "running", 100);
      outbox.claim(10_100);
      outbox.failed(1_100);
      expect(open().read()).toMatchObject({ retryAt: 1_100, failures: 1 });
      outbox.acked("s2", "running", 1_200);
      expect(open().read()).toMatchObject({ ackedState: "s2", retryAt: null, failures: 0 });
    }));

  it("forgets what it kept in memory when the run is deleted", () =>
    withOutbox((open) => {
      const outbox = open();
      outbox.acked("s1", "running", 100);
      outbox.acked("s2", "running", 200);
      outbox.claim(10_200);
      outbox.forget();
      expect(outbox.read()).toMatchObject({ ackedState: "s1", retryAt: null });
    }));
});
