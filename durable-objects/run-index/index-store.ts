/**
 * IndexStore: the only code that speaks SQL in a RunIndex (one per API key). It owns:
 *  - `entries`: one row per run of the key, indexed for every order and filter of a listing
 *    (createdAt then runId descending; status; name);
 *  - `entry_tags`: one row per tag of a run, keyed (key, value, createdAt, runId), so a tag
 *    filter walks its own runs in listing order;
 *  - `removed`: runs whose entry was removed (deleted runs), so a late update cannot bring
 *    one back; kept `REMOVED_KEPT_MS`, far longer than any update can be in flight;
 *  - `status_counts`: runs per status, kept by triggers, so `GET /v1/stats` costs O(1).
 */
import type { ListingEntry, ListingQuery } from "../../src/engine/listing";
import { RUN_STATUSES, type RunStatus } from "../../src/engine/records";

const SCHEMA_VERSION = 1;
const REMOVED_KEPT_MS = 7 * 86_400_000;
const DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
  run_id TEXT PRIMARY KEY,
  -- the run's version when it sent this: an update with an older one is ignored
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  name TEXT,
  started_at INTEGER,
  ended_at INTEGER,
  -- the run's tags as a JSON object (entry_tags holds them for filtering)
  tags TEXT NOT NULL,
  steps_total INTEGER NOT NULL,
  steps_succeeded INTEGER NOT NULL,
  steps_failed INTEGER NOT NULL,
  steps_skipped INTEGER NOT NULL,
  steps_cancelled INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_created ON entries (created_at, run_id);
CREATE INDEX IF NOT EXISTS entries_by_status ON entries (status, created_at, run_id);
CREATE INDEX IF NOT EXISTS entries_by_name ON entries (name, created_at, run_id);
CREATE TABLE IF NOT EXISTS entry_tags (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  PRIMARY KEY (key, value, created_at, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_tags_by_run ON entry_tags (run_id);
CREATE TABLE IF NOT EXISTS removed (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS removed_by_time ON removed (at);
CREATE TABLE IF NOT EXISTS status_counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL);
${RUN_STATUSES.map((s) => `INSERT OR IGNORE INTO status_counts (status, n) VALUES ('${s}', 0);`).join("\n")}
CREATE TRIGGER IF NOT EXISTS entries_counted AFTER INSERT ON entries BEGIN
  UPDATE status_counts SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER IF NOT EXISTS entries_recounted AFTER UPDATE OF status ON entries
WHEN NEW.status != OLD.status BEGIN
  UPDATE status_counts SET n = n - 1 WHERE status = OLD.status;
  UPDATE status_counts SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER IF NOT EXISTS entries_uncounted AFTER DELETE ON entries BEGIN
  UPDATE status_counts SET n = n - 1 WHERE status = OLD.status;
END;
`;

/** How an update was taken: applied, older than what the index holds, or for a removed run. */
export type UpsertOutcome = "stored" | "stale" | "removed";

interface EntryRow {
  runId: string;
  version: number;
  createdAt: number;
  status: RunStatus;
  name: string | null;
  startedAt: number | null;
  endedAt: number | null;
  tags: string;
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  cancelled: number;
}

const ENTRY_COLUMNS = `e.run_id AS runId, e.version, e.created_at AS createdAt, e.status,
  e.name, e.started_at AS startedAt, e.ended_at AS endedAt, e.tags,
  e.steps_total AS total, e.steps_succeeded AS succeeded, e.steps_failed AS failed,
  e.steps_skipped AS skipped, e.steps_cancelled AS cancelled`;

export class IndexStore {
  private readonly sql: SqlStorage;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    const version = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'meta'")
      .one().n;
    if (version === 0) {
      this.sql.exec(DDL);
      this.sql.exec(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
        String(SCHEMA_VERSION),
      );
    }
  }

  /** Stores each entry as `upsert` does, all in one transaction: one commit for the batch. */
  upsertAll(entries: readonly ListingEntry[]): UpsertOutcome[] {
    return this.storage.transactionSync(() => entries.map((e) => this.upsert(e)));
  }

  /**
   * Stores the run's entry unless the index holds it at this version or a newer one, or the
   * run was removed: one statement (an upsert that returns the row it stored), and one more
   * for a run's tags. A RunIndex takes every update of its key's runs (two or three a run),
   * so each statement here is on the path of many runs' `POST`s.
   */
  upsert(e: ListingEntry): UpsertOutcome {
    return this.storage.transactionSync(() => {
      const c = e.counts;
      const stored = this.sql.exec(
        `INSERT INTO entries (run_id, version, created_at, status, name, started_at, ended_at,
          tags, steps_total, steps_succeeded, steps_failed, steps_skipped, steps_cancelled)
          SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
          WHERE NOT EXISTS (SELECT 1 FROM removed WHERE run_id = ?)
          ON CONFLICT (run_id) DO UPDATE SET version = excluded.version,
            status = excluded.status, started_at = excluded.started_at,
            ended_at = excluded.ended_at, steps_total = excluded.steps_total,
            steps_succeeded = excluded.steps_succeeded, steps_failed = excluded.steps_failed,
            steps_skipped = excluded.steps_skipped, steps_cancelled = excluded.steps_cancelled
          WHERE excluded.version > entries.version
          RETURNING 1`,
        ...[e.runId, e.version, e.createdAt, e.status, e.name, e.startedAt, e.endedAt],
        ...[JSON.stringify(e.tags), c.total, c.succeeded, c.failed, c.skipped, c.cancelled],
        e.runId,
      );
      if (stored.toArray().length === 0) {
        const gone = this.sql.exec("SELECT 1 FROM removed WHERE run_id = ?", e.runId);
        return gone.toArray().length > 0 ? "removed" : "stale";
      }
      // A run's tags never change: those of its first update, kept again by the later ones.
      if (Object.keys(e.tags).length > 0)
        this.sql.exec(
          `INSERT OR IGNORE INTO entry_tags (key, value, created_at, run_id)
            SELECT key, value, ?, ? FROM json_each(?)`,
          e.createdAt,
          e.runId,
          JSON.stringify(e.tags),
        );
      return "stored";
    });
  }

  /** Removes the run's entry for good (a deleted run): later updates for it are ignored. */
  remove(runId: string, now: number): void {
    this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM entries WHERE run_id = ?", runId);
      this.sql.exec("DELETE FROM entry_tags WHERE run_id = ?", runId);
      this.sql.exec("INSERT OR REPLACE INTO removed (run_id, at) VALUES (?, ?)", runId, now);
      this.sql.exec("DELETE FROM removed WHERE at < ?", now - REMOVED_KEPT_MS);
    });
  }

  /**
   * One page of entries in listing order, `limit` + 1 rows (one more than the page tells
   * whether another follows). A tag filter walks the first tag's rows, already in listing
   * order (CROSS JOIN keeps SQLite from choosing another outer loop); otherwise SQLite picks
   * the index of `entries` that fits the filters.
   */
  page(q: ListingQuery): ListingEntry[] {
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    const [first, ...more] = q.tags ?? [];
    // the table whose (created_at, run_id) orders the page
    const by = first ? "t" : "e";
    const from = first ? "entry_tags t CROSS JOIN entries e ON e.run_id = t.run_id" : "entries e";
    if (first) {
      where.push("t.key = ? AND t.value = ?");
      args.push(first.key, first.value);
    }
    for (const tag of more) {
      where.push("e.run_id IN (SELECT run_id FROM entry_tags WHERE key = ? AND value = ?)");
      args.push(tag.key, tag.value);
    }
    if (q.statuses) {
      where.push(`e.status IN (${q.statuses.map(() => "?").join(", ")})`);
      args.push(...q.statuses);
    }
    if (q.name !== undefined) {
      where.push("e.name = ?");
      args.push(q.name);
    }
    if (q.createdAfter !== undefined) {
      where.push(`${by}.created_at > ?`);
      args.push(q.createdAfter);
    }
    if (q.createdBefore !== undefined) {
      where.push(`${by}.created_at < ?`);
      args.push(q.createdBefore);
    }
    if (q.after) {
      where.push(`(${by}.created_at, ${by}.run_id) < (?, ?)`);
      args.push(q.after.createdAt, q.after.runId);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const rows = this.sql
      .exec<EntryRow & Record<string, SqlStorageValue>>(
        `SELECT ${ENTRY_COLUMNS} FROM ${from} ${filter}
          ORDER BY ${by}.created_at DESC, ${by}.run_id DESC LIMIT ?`,
        ...args,
        q.limit + 1,
      )
      .toArray();
    return rows.map(entryOf);
  }

  /** Runs per status (statuses with none left out), and their total. */
  stats(): { total: number; byStatus: Partial<Record<RunStatus, number>> } {
    const rows = this.sql
      .exec<{ status: RunStatus; n: number }>("SELECT status, n FROM status_counts WHERE n > 0")
      .toArray();
    return {
      total: rows.reduce((sum, r) => sum + r.n, 0),
      byStatus: Object.fromEntries(rows.map((r) => [r.status, r.n])),
    };
  }
}

function entryOf(row: EntryRow): ListingEntry {
  const { total, succeeded, failed, skipped, cancelled } = row;
  return {
    runId: row.runId,
    version: row.version,
    name: row.name,
    status: row.status,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    tags: JSON.parse(row.tags) as Record<string, string>,
    counts: { total, succeeded, failed, skipped, cancelled },
  };
}
