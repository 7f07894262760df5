/**
 * The run checkpoint's tables, `CREATE ... IF NOT EXISTS`, a schema-version row, and the
 * migrations that bring an older run's storage up to date.
 */
import { ATTEMPTS_RAN_HELD } from "./attempt-table";
import { EVENTS_HELD } from "./event-table";
import { HELD_ROWS_VIEW, type Sql } from "./sql";
import { STEPS_HELD } from "./step-table";

export const SCHEMA_VERSION = 7;

/**
 * Kept by triggers, so a status read costs O(1) whatever the plan's size (SPEC 6.1): `version`
 * grows with every change a status document shows (its ETag), the others count steps.
 */
const RUN_COUNTER_COLUMNS = [
  "version",
  "steps_total",
  "steps_succeeded",
  "steps_failed",
  "steps_skipped",
  "steps_cancelled",
  "steps_running",
  // over succeeded and failed steps that have both times: averageStepDurationMs
  "duration_sum",
  "duration_count",
] as const;

const DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  iterations INTEGER NOT NULL DEFAULT 0,
  -- bounded mode: the iteration count at which the run pauses (grows on resume)
  iteration_budget INTEGER,
  error TEXT,
  events_dropped INTEGER NOT NULL DEFAULT 0,
  -- the Worker's public origin, for callback URLs
  base_url TEXT,
  -- JSON list of step ids awaiting the risk gate (SPEC 5.4), null once answered
  risk_gate TEXT,
  -- set when the run's deletion began (DELETE or retention, SPEC 8.3): it reads as gone
  delete_requested_at INTEGER,
  ${RUN_COUNTER_COLUMNS.map((c) => `${c} INTEGER NOT NULL DEFAULT 0`).join(",\n  ")}
);
-- the compiled plan's JSON in parts: a Durable Object's SQLite value or row holds at most 2 MB,
-- and a 10,000-step plan compiles to more than that
CREATE TABLE IF NOT EXISTS plan_parts (
  seq INTEGER PRIMARY KEY,
  part TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
  idx INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  tool TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER,
  ended_at INTEGER,
  next_attempt_at INTEGER,
  waiting_for TEXT,
  data TEXT,
  error TEXT,
  http_status INTEGER,
  execution_ms INTEGER,
  -- attempts made before the last redrive: the retry policy counts from here
  retry_base INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS steps_by_id ON steps (id);
CREATE INDEX IF NOT EXISTS steps_due ON steps (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
-- pages of steps by status (GET /v1/runs/:id/steps?status=), in plan order
CREATE INDEX IF NOT EXISTS steps_by_status ON steps (status, idx);
CREATE TABLE IF NOT EXISTS attempts (
  step_idx INTEGER NOT NULL,
  -- the forEach item, or -1 for the step itself
  item_index INTEGER NOT NULL DEFAULT -1,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  category TEXT,
  http_status INTEGER,
  message TEXT,
  PRIMARY KEY (step_idx, item_index, attempt)
);
-- forEach items: one row each, so a step with 1,000 items never holds them all in memory
CREATE TABLE IF NOT EXISTS items (
  step_idx INTEGER NOT NULL,
  item_index INTEGER NOT NULL,
  item TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  -- attempts made before the last redrive: the retry policy counts from here
  retry_base INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  data TEXT,
  error TEXT,
  PRIMARY KEY (step_idx, item_index)
);
-- callback tokens (the task-token pattern): single use, bound to one attempt
CREATE TABLE IF NOT EXISTS callbacks (
  token TEXT PRIMARY KEY,
  step_idx INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  result TEXT
);
-- rollback: one row per compensation, in the order they run
CREATE TABLE IF NOT EXISTS compensations (
  seq INTEGER PRIMARY KEY,
  step_idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  started_at INTEGER,
  ended_at INTEGER,
  error TEXT
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  event_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  -- null while due; set when this attempt was made
  at INTEGER,
  http_status INTEGER,
  error TEXT,
  PRIMARY KEY (event_id, attempt)
);
CREATE INDEX IF NOT EXISTS webhook_due ON webhook_deliveries (due_at) WHERE at IS NULL;
-- the outbox of the run's listing entry (SPEC 8.2): what the owner's RunIndex last acknowledged
CREATE TABLE IF NOT EXISTS listing_outbox (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  -- the listing-visible state the index acknowledged (listingState), and its status
  acked_state TEXT,
  acked_status TEXT,
  -- when the index last acknowledged an update (progress updates are coalesced from it)
  sent_at INTEGER,
  -- null, or when the next update may be sent: after a failure (backoff), or once an update
  -- in flight can no longer be (a claim: a crash mid-send sends it again)
  retry_at INTEGER,
  failures INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  step_id TEXT,
  attempt INTEGER,
  data TEXT
);
`;

/**
 * v4: the repairs a run asked for (SPEC 9.2), owned by replan-table.ts, with triggers that move
 * the status ETag. Kept whole here: part of a fresh schema (DDL) and the v4 migration.
 */
const REPLANS_DDL = `
CREATE TABLE IF NOT EXISTS replans (
  n INTEGER PRIMARY KEY,
  step_idx INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL,
  diagnosis TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  requested_at INTEGER NOT NULL,
  asked_at INTEGER,
  answered_at INTEGER,
  reason TEXT,
  new_step_ids TEXT
);
CREATE INDEX IF NOT EXISTS replans_by_step ON replans (step_idx, state);
${["INSERT", "UPDATE", "DELETE"]
  .map(
    (op) =>
      `CREATE TRIGGER IF NOT EXISTS replans_${op.toLowerCase()}_changed AFTER ${op} ON replans BEGIN UPDATE run SET version = version + 1; END;`,
  )
  .join("\n")}
`;

/** A step's duration when it counts towards the average (succeeded or failed, both times known). */
const duration = (row: "NEW" | "OLD") =>
  `(CASE WHEN ${row}.status IN ('succeeded', 'failed') AND ${row}.started_at IS NOT NULL
    AND ${row}.ended_at IS NOT NULL THEN ${row}.ended_at - ${row}.started_at ELSE 0 END)`;
const counted = (row: "NEW" | "OLD") =>
  `(${row}.status IN ('succeeded', 'failed') AND ${row}.started_at IS NOT NULL AND ${row}.ended_at IS NOT NULL)`;
const moved = (status: string) => `(NEW.status = '${status}') - (OLD.status = '${status}')`;
const bump = "UPDATE run SET version = version + 1";

/**
 * What a write to each table, view or kind of held rows (Sql.later) writes, its triggers'
 * included (one not named writes only itself), for Sql's memos and held rows: the run row
 * (its counters, its `version`) is read again only after one of these, not after an event
 * (schema.test.ts checks the triggers). v6: every row held in a turn (a step's start, its
 * success, events) is written by one insert into `held_rows`, whose trigger for each kind
 * writes it: a dependency hop is one statement, not three.
 */
export const TRIGGERED_WRITES = {
  held_rows: ["events", "steps", "attempts", "run"],
  step_starts: ["steps", "attempts", "run"],
  step_successes: ["steps", "attempts", "run"],
  steps: ["steps", "run"],
  items: ["items", "run"],
  compensations: ["compensations", "run"],
  webhook_deliveries: ["webhook_deliveries", "run"],
  replans: ["replans", "run"],
} as const;

/** The view of held rows and the trigger of each kind, written by the tables' owners. */
const HELD_ROWS = [HELD_ROWS_VIEW, EVENTS_HELD, ATTEMPTS_RAN_HELD, STEPS_HELD].join("\n");

const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS steps_counted AFTER INSERT ON steps BEGIN
  UPDATE run SET version = version + 1, steps_total = steps_total + 1;
END;
CREATE TRIGGER IF NOT EXISTS steps_recounted AFTER UPDATE ON steps BEGIN
  UPDATE run SET version = version + 1,
    steps_succeeded = steps_succeeded + ${moved("succeeded")},
    steps_failed = steps_failed + ${moved("failed")},
    steps_skipped = steps_skipped + ${moved("skipped")},
    steps_cancelled = steps_cancelled + ${moved("cancelled")},
    steps_running = steps_running + ${moved("running")},
    duration_sum = duration_sum + ${duration("NEW")} - ${duration("OLD")},
    duration_count = duration_count + ${counted("NEW")} - ${counted("OLD")};
END;
CREATE TRIGGER IF NOT EXISTS run_changed AFTER UPDATE ON run WHEN NEW.version = OLD.version BEGIN
  ${bump};
END;
${["items", "compensations"]
  .flatMap((table) =>
    ["INSERT", "UPDATE", "DELETE"].map(
      (op) =>
        `CREATE TRIGGER IF NOT EXISTS ${table}_${op.toLowerCase()}_changed AFTER ${op} ON ${table} BEGIN ${bump}; END;`,
    ),
  )
  .join("\n")}
CREATE TRIGGER IF NOT EXISTS webhook_deliveries_made AFTER UPDATE OF at ON webhook_deliveries BEGIN ${bump}; END;
${HELD_ROWS}
`;

/** Brings a run's storage from an older schema version to the next, by version reached. */
const MIGRATIONS: Record<number, (db: Sql) => void> = {
  // v2: the counters of status reads (SPEC 6.1), computed once from the rows.
  2: (db) => {
    for (const c of RUN_COUNTER_COLUMNS)
      db.script(`ALTER TABLE run ADD COLUMN ${c} INTEGER NOT NULL DEFAULT 0`);
    db.script(`UPDATE run SET
      steps_total = (SELECT COUNT(*) FROM steps),
      steps_succeeded = (SELECT COUNT(*) FROM steps WHERE status = 'succeeded'),
      steps_failed = (SELECT COUNT(*) FROM steps WHERE status = 'failed'),
      steps_skipped = (SELECT COUNT(*) FROM steps WHERE status = 'skipped'),
      steps_cancelled = (SELECT COUNT(*) FROM steps WHERE status = 'cancelled'),
      steps_running = (SELECT COUNT(*) FROM steps WHERE status = 'running'),
      duration_sum = (SELECT COALESCE(SUM(ended_at - started_at), 0) FROM steps
        WHERE status IN ('succeeded', 'failed') AND started_at IS NOT NULL AND ended_at IS NOT NULL),
      duration_count = (SELECT COUNT(*) FROM steps
        WHERE status IN ('succeeded', 'failed') AND started_at IS NOT NULL AND ended_at IS NOT NULL)`);
  },
  // v3: listings and deletion (SPEC 8). The listing outbox is a new table (created above,
  // empty: the run is due to join its owner's index); the run row gains its deletion mark.
  3: (db) => {
    db.script(`ALTER TABLE run ADD COLUMN delete_requested_at INTEGER`);
  },
  // v4: replanning (SPEC 9.2); a run stored before it has no repairs.
  4: (db) => db.script(REPLANS_DDL),
  // v5: the views of a step's start and success, created with the triggers.
  5: () => {},
  // v6: held rows (HELD_ROWS, created with the triggers) write a step's start and success.
  6: (db) => db.script("DROP VIEW IF EXISTS step_starts; DROP VIEW IF EXISTS step_successes;"),
  // v7: a delivery shows in the status once made (`at`), not when scheduled or claimed.
  7: (db) =>
    db.script(
      ["insert", "update", "delete"]
        .map((op) => `DROP TRIGGER IF EXISTS webhook_deliveries_${op}_changed;`)
        .join(" "),
    ),
};

/** The schema version of this storage: 0 when nothing was created yet. */
export function storedSchemaVersion(db: Sql): number {
  if (!db.tableExists("meta")) return 0;
  const row = db.one<{ value: string }>`SELECT value FROM meta WHERE key = 'schema_version'`;
  return row ? Number(row.value) : 0;
}

/**
 * Creates the schema, or brings an older one up to date (a no-op when it is current).
 * `stored`: the storage's schema version, when the caller has just read it.
 */
export function migrate(db: Sql, stored = storedSchemaVersion(db)): void {
  if (stored === SCHEMA_VERSION) return;
  if (stored > SCHEMA_VERSION)
    throw new Error(`storage schema ${stored} is newer than this code (${SCHEMA_VERSION})`);
  // A fresh storage gets the current schema whole, in one statement: a new run's first call.
  if (stored === 0) return db.script(FRESH_SCHEMA);
  db.script(DDL); // tables added since `stored`
  for (let v = stored + 1; v <= SCHEMA_VERSION; v++) MIGRATIONS[v]!(db);
  db.script(TRIGGERS);
  db.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ${String(SCHEMA_VERSION)})`;
}

const FRESH_SCHEMA = `${DDL}${REPLANS_DDL}${TRIGGERS}
INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '${SCHEMA_VERSION}');`;
