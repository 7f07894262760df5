/**
 * Sql's memos on the storage of a scratch object: a memo is read again after a write to its
 * table (or, with no table, after any write), and after whatever changed the storage behind
 * the statements (a rolled back transaction, a wipe, DDL). Rows held back (`later`) are
 * written together, before the next statement and before the turn ends.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unique } from "../../test/helpers";
import { HELD_BATCH_BYTES, HELD_ROWS_VIEW, heldRowsTrigger, Sql } from "./sql";

async function withSql(
  test: (db: Sql, storage: DurableObjectStorage) => void | Promise<void>,
): Promise<void> {
  const stub = env.RUNS.get(env.RUNS.idFromName(unique("sql")));
  await runInDurableObject(stub, async (_, state) => {
    // an insert into the view `into_a` writes `a`; one into `c` adds to `b` by a trigger (as a
    // step's row moves the run's counters); held rows of kind `a` go to a, of `c` to c
    const db = new Sql(state.storage.sql, { into_a: ["a"], c: ["c", "b"] });
    db.script(`CREATE TABLE a (n INTEGER NOT NULL); CREATE TABLE b (n INTEGER NOT NULL);
      CREATE TABLE c (n INTEGER NOT NULL);
      INSERT INTO a (n) VALUES (1); INSERT INTO b (n) VALUES (1);
      CREATE VIEW into_a (n) AS SELECT NULL WHERE 0;
      CREATE TRIGGER into_a_written INSTEAD OF INSERT ON into_a BEGIN
        INSERT INTO a (n) VALUES (NEW.n);
      END;
      CREATE TRIGGER c_counted AFTER INSERT ON c BEGIN UPDATE b SET n = n + NEW.n; END;
      ${HELD_ROWS_VIEW}
      ${heldRowsTrigger("a", "INSERT INTO a (n) VALUES (COALESCE(NEW.f0, length(NEW.text)))")}
      ${heldRowsTrigger("c", "INSERT INTO c (n) VALUES (NEW.f0)")}`);
    await test(db, state.storage);
  });
}

/** Memos of `SUM(n)` of a (scoped to a, and to any write) and the reads that fill them. */
function sums(db: Sql) {
  const reads = { a: 0, b: 0, any: 0 };
  const sumOfA = () => db.one<{ s: number }>`SELECT SUM(n) AS s FROM a`!.s;
  const sumOfB = () => db.one<{ s: number }>`SELECT SUM(n) AS s FROM b`!.s;
  return {
    reads,
    ofA: () => db.memo("a", "a", () => (reads.a++, sumOfA())),
    ofB: () => db.memo("b", "b", () => (reads.b++, sumOfB())),
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

  it("reads again after a write to a view that writes its table", () =>
    withSql((db) => {
      const m = sums(db);
      m.ofA();
      db.run`INSERT INTO into_a (n) VALUES (4)`;
      expect(m.ofA()).toBe(5);
      expect(m.reads.a).toBe(2);
    }));

  it("reads again after a write to a table whose triggers write its table", () =>
    withSql((db) => {
      const m = sums(db);
      m.ofB();
      db.run`INSERT INTO c (n) VALUES (3)`;
      expect(m.ofB()).toBe(4);
      expect(m.reads.b).toBe(2);
    }));

  it("holds a value it is told (remember) until the next write to its table", () =>
    withSql((db) => {
      const m = sums(db);
      db.run`UPDATE a SET n = 7`;
      db.remember("a", "a", 7);
      expect(m.ofA()).toBe(7);
      expect(m.reads.a).toBe(0);
      db.run`INSERT INTO b (n) VALUES (1)`;
      expect(m.ofA()).toBe(7);
      db.run`UPDATE a SET n = 8`;
      expect(m.ofA()).toBe(8);
      expect(m.reads.a).toBe(1);
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
      db.script("CREATE TABLE d (n INTEGER)");
      m.ofA();
      expect(m.reads.a).toBe(3);
    }));
});

/**
 * Holds `n` rows of a back (0, 1, ...; with `bytes`, each a text that long, counted as its
 * length); `since()`: the statements run since the holder was made, `count()` among them.
 */
function holder(db: Sql) {
  const first = db.statements;
  const hold = (n: number, bytes = 0) => {
    for (let i = 0; i < n; i++)
      if (bytes > 0) db.later("a", [null], "x".repeat(bytes));
      else db.later("a", [i]);
  };
  const count = () => db.one<{ c: number }>`SELECT COUNT(*) AS c FROM a`!.c;
  return { since: () => db.statements - first, hold, count };
}

describe("Sql.later", () => {
  it("writes held rows in one statement, before the next statement reads", () =>
    withSql((db) => {
      const h = holder(db);
      h.hold(50);
      expect(h.since()).toBe(0);
      expect(h.count()).toBe(51);
      expect(h.since()).toBe(2); // the rows, then the read
    }));

  it("writes them before the turn ends, with no statement after them", () =>
    withSql(async (db) => {
      const h = holder(db);
      h.hold(3);
      await Promise.resolve();
      expect(h.since()).toBe(1);
      expect(h.count()).toBe(4);
    }));

  it("writes rows of every kind in one statement, in the order they were held", () =>
    withSql((db) => {
      const h = holder(db);
      db.later("a", [5]);
      db.later("c", [2]);
      db.later("a", [6]);
      expect(db.all<{ n: number }>`SELECT n FROM a ORDER BY rowid`.map((r) => r.n)).toEqual([
        1, 5, 6,
      ]);
      expect(db.one<{ n: number }>`SELECT n FROM b`!.n).toBe(3); // c's trigger added 2
      expect(h.since()).toBe(3);
    }));

  it("writes a batch first when the next row would take it past HELD_BATCH_BYTES", () =>
    withSql((db) => {
      const h = holder(db);
      h.hold(3, HELD_BATCH_BYTES / 2);
      expect(h.since()).toBe(1);
      expect(h.count()).toBe(4);
      expect(h.since()).toBe(3);
      expect(db.one<{ n: number }>`SELECT MAX(n) AS n FROM a`!.n).toBe(HELD_BATCH_BYTES / 2);
    }));

  it("writes a text over half of HELD_BATCH_BYTES at once, alone, after the rows held before it", () =>
    withSql((db) => {
      const h = holder(db);
      h.hold(2);
      h.hold(1, HELD_BATCH_BYTES / 2 + 1);
      expect(h.since()).toBe(2);
      expect(db.all<{ n: number }>`SELECT n FROM a ORDER BY rowid`.map((r) => r.n)).toEqual([
        1,
        0,
        1,
        HELD_BATCH_BYTES / 2 + 1,
      ]);
    }));

  it("leaves them held across writes to other tables; a write to theirs writes them first", () =>
    withSql((db) => {
      const h = holder(db);
      h.hold(2); // 0 and 1, into a (which holds 1)
      db.run`INSERT INTO b (n) VALUES (7)`;
      db.run`UPDATE b SET n = n + 1`;
      expect(h.since()).toBe(2);
      db.run`DELETE FROM a WHERE n = 0`;
      expect(h.since()).toBe(4);
      expect(h.count()).toBe(2);
    }));

  it("writes them before a write to a view that writes their table", () =>
    withSql((db) => {
      const h = holder(db);
      h.hold(2);
      db.run`INSERT INTO into_a (n) VALUES (9)`;
      expect(h.since()).toBe(2);
      expect(db.all<{ n: number }>`SELECT n FROM a ORDER BY rowid`.map((r) => r.n)).toEqual([
        1, 0, 1, 9,
      ]);
    }));

  it("leaves them held across a memo's read of another table; a memo of theirs writes them", () =>
    withSql((db) => {
      const h = holder(db);
      const m = sums(db);
      h.hold(2);
      expect(m.ofB()).toBe(1); // read
      expect(m.ofB()).toBe(1); // remembered
      expect(h.since()).toBe(1);
      expect(m.ofA()).toBe(2); // 1, 0 and 1
      expect(h.since()).toBe(3);
    }));

  it("writes them before a memo's read of a table their triggers write", () =>
    withSql((db) => {
      const m = sums(db);
      m.ofB();
      db.later("c", [5]);
      expect(m.ofB()).toBe(6);
    }));

  it("drops what it holds when told (a wipe)", () =>
    withSql(async (db) => {
      const h = holder(db);
      h.hold(3);
      db.dropHeld();
      await Promise.resolve();
      expect(h.since()).toBe(0);
      expect(h.count()).toBe(1);
    }));
});

describe("Sql.transaction", () => {
  it("writes the rows held within it inside it, and drops them when it throws", () =>
    withSql(async (db, storage) => {
      const h = holder(db);
      const tx = (body: () => void) => db.transaction((f) => storage.transactionSync(f), body);
      tx(() => h.hold(2));
      expect(h.since()).toBe(1);
      expect(() =>
        tx(() => {
          h.hold(3);
          throw new Error("undone");
        }),
      ).toThrow("undone");
      await Promise.resolve();
      expect(h.since()).toBe(1);
      expect(h.count()).toBe(3);
    }));
});
