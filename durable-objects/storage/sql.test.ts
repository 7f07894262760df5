/**
 * Sql's memos on the storage of a scratch object: a memo is read again after a write to its
 * table (or, with no table, after any write), and after whatever changed the storage behind
 * the statements (a rolled back transaction, a wipe, DDL).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unique } from "../../test/helpers";
import { Sql } from "./sql";

async function withSql(test: (db: Sql, storage: DurableObjectStorage) => void): Promise<void> {
  const stub = env.RUNS.get(env.RUNS.idFromName(unique("sql")));
  await runInDurableObject(stub, (_, state) => {
    const db = new Sql(state.storage.sql);
    db.script(`CREATE TABLE a (n INTEGER NOT NULL); CREATE TABLE b (n INTEGER NOT NULL);
      INSERT INTO a (n) VALUES (1); INSERT INTO b (n) VALUES (1);`);
    test(db, state.storage);
  });
}

/** Memos of `SUM(n)` of a (scoped to a, and to any write) and the reads that fill them. */
function sums(db: Sql) {
  const reads = { a: 0, any: 0 };
  const sumOfA = () => db.one<{ s: number }>`SELECT SUM(n) AS s FROM a`!.s;
  return {
    reads,
    ofA: () => db.memo("a", "a", () => (reads.a++, sumOfA())),
    anyWrite: () => db.memo("any", null, () => (reads.any++, sumOfA())),
  };
}

describe("Sql.memo", () => {
  it("reads again after a write to its table, not after a write to another", () =>
    withSql((db) => {
      const m = sums(db);
      expect([m.ofA(), m.ofA()]).toEqual([1, 1]);
      expect(m.reads.a).toBe(1);
      db.run`INSERT INTO b (n) VALUES (5)`;
      expect(m.ofA()).toBe(1);
      expect(m.reads.a).toBe(1);
      db.run`UPDATE a SET n = n + 1`;
      expect(m.ofA()).toBe(2);
      expect(m.reads.a).toBe(2);
    }));

  it("with no table, reads again after any write", () =>
    withSql((db) => {
      const m = sums(db);
      m.anyWrite();
      m.anyWrite();
      db.run`INSERT INTO b (n) VALUES (5)`;
      expect(m.anyWrite()).toBe(1);
      expect(m.reads.any).toBe(2);
    }));

  it("reads again after a rolled back transaction, a wipe or DDL (changed, script)", () =>
    withSql((db, storage) => {
      const m = sums(db);
      expect(() =>
        storage.transactionSync(() => {
          db.run`UPDATE a SET n = 10`;
          expect(m.ofA()).toBe(10);
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      expect(m.ofA()).toBe(10); // what the caller must report: the storage changed under it
      db.changed();
      expect(m.ofA()).toBe(1);
      db.script("CREATE TABLE c (n INTEGER)");
      m.ofA();
      expect(m.reads.a).toBe(3);
    }));
});
