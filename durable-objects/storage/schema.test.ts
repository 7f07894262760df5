/**
 * The checkpoint's schema migrations, on the storage of a scratch object: a run stored under
 * schema v2 (before listings and deletion) opens as v3 with its data intact, reads as not
 * being deleted, and is due to join its owner's listing (SPEC 8.2). TRIGGERED_WRITES names
 * what each trigger writes.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "../../src/engine/plan";
import { configSchema } from "../../src/engine/plan-schema";
import { listingUpdateDue } from "../../src/engine/listing";
import { unique } from "../../test/helpers";
import { Checkpoint } from "./checkpoint";
import { migrate, SCHEMA_VERSION, storedSchemaVersion, TRIGGERED_WRITES } from "./schema";
import { Sql } from "./sql";

/** What v3 added, taken away again: the storage as schema v2 left it. */
const TO_V2 = `
  DROP TABLE listing_outbox;
  ALTER TABLE run DROP COLUMN delete_requested_at;
  UPDATE meta SET value = '2' WHERE key = 'schema_version';
`;

describe("schema migrations", () => {
  it("opens a run stored under v2 as v3: data kept, not deleted, due to be listed", async () => {
    const stub = env.RUNS.get(env.RUNS.idFromName(unique("migrate")));
    await runInDurableObject(stub, (_, state) => {
      const now = Date.now();
      // plans stored before v3 have no tags
      const plan = { name: "old", input: null, config: configSchema.parse({}), steps: [] };
      const before = new Checkpoint(state.storage);
      const old = { id: "run_old", owner: "public", now, baseUrl: "http://x", riskGate: [] };
      before.create({ ...old, plan: plan as unknown as CompiledPlan });
      state.storage.sql.exec(TO_V2);
      expect(storedSchemaVersion(new Sql(state.storage.sql))).toBe(2);

      const after = new Checkpoint(state.storage);
      expect(after.upgraded).toBe(true);
      expect(storedSchemaVersion(new Sql(state.storage.sql))).toBe(SCHEMA_VERSION);
      const run = after.runRecord()!;
      expect(run).toMatchObject({ id: "run_old", status: "pending", deleteRequestedAt: null });
      expect(after.plan.read()).toMatchObject({ name: "old", tags: {} });
      expect(listingUpdateDue(run, after.listing.read())).toBe(run.createdAt);
      expect(new Checkpoint(state.storage).upgraded).toBe(false);
    });
  });
});

/** Schema v5's views of a step's start and success, which v6's held rows replace. */
const TO_V5 = `
  DROP VIEW held_rows;
  CREATE VIEW step_starts (step_idx, attempt, at) AS SELECT NULL, NULL, NULL WHERE 0;
  CREATE VIEW step_successes (step_idx) AS SELECT NULL WHERE 0;
  UPDATE meta SET value = '5' WHERE key = 'schema_version';
`;

describe("schema v6", () => {
  it("opens a run stored under v5: its steps start and succeed through held rows", async () => {
    const stub = env.RUNS.get(env.RUNS.idFromName(unique("migrate-v5")));
    await runInDurableObject(stub, (_, state) => {
      const plan = {
        name: "old",
        input: null,
        config: configSchema.parse({}),
        steps: [{ index: 0, id: "a", tool: "http" }],
        tags: {},
      };
      const old = { id: "run_v5", owner: "public", now: 1_000, baseUrl: "http://x", riskGate: [] };
      new Checkpoint(state.storage).create({ ...old, plan: plan as unknown as CompiledPlan });
      state.storage.sql.exec(TO_V5);

      const after = new Checkpoint(state.storage);
      expect(after.upgraded).toBe(true);
      after.steps.attemptStarted(0, 1, 2_000);
      after.steps.succeeded(0, 1, "{}", 200, 3, 2_003);
      after.flush();
      expect(after.steps.get(0)).toMatchObject({
        status: "succeeded",
        attempts: 1,
        endedAt: 2_003,
      });
      expect(after.attempts.ofStep(0)).toMatchObject([{ attempt: 1, endedAt: 2_003 }]);
      const views = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'view'")
        .toArray();
      expect(views.map((v) => v.name)).toEqual(["held_rows"]);
    });
  });
});

/** What Sql takes a write to `table` to write (see TRIGGERED_WRITES). */
const writesOf = (table: string): readonly string[] =>
  (TRIGGERED_WRITES as Record<string, readonly string[]>)[table] ?? [table];

describe("TRIGGERED_WRITES", () => {
  it("names every table a trigger writes, and what that table's triggers write", async () => {
    const stub = env.RUNS.get(env.RUNS.idFromName(unique("triggers")));
    await runInDurableObject(stub, (_, state) => {
      migrate(new Sql(state.storage.sql));
      const triggers = state.storage.sql
        .exec<{ tbl: string; sql: string }>(
          "SELECT tbl_name AS tbl, sql FROM sqlite_master WHERE type = 'trigger'",
        )
        .toArray();
      expect(triggers.length).toBeGreaterThan(10);
      for (const { tbl, sql } of triggers) {
        const body = sql.slice(sql.indexOf("BEGIN"));
        const written = [...body.matchAll(/\b(?:UPDATE|INSERT INTO|DELETE FROM)\s+(\w+)/gi)];
        expect(written.length, sql).toBeGreaterThan(0);
        // a trigger of held rows (Sql.later) writes its kind's rows: the kind names what they write
        const kind = /WHEN NEW\.kind = '([\w.]+)'/.exec(sql)?.[1]?.split(".")[0];
        for (const [, table] of written)
          for (const writer of kind ? [tbl, kind] : [tbl])
            expect(writesOf(writer), `${writer} -> ${table}`).toEqual(
              expect.arrayContaining([...writesOf(table!)]),
            );
      }
    });
  });
});
