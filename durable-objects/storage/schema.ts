/** The run checkpoint's tables. `CREATE ... IF NOT EXISTS` plus a schema-version row. */
import type { Sql } from "./sql";

export const SCHEMA_VERSION = 1;

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
  risk_gate TEXT
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
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  step_id TEXT,
  attempt INTEGER,
  data TEXT
);
`;

export function migrate(db: Sql): void {
  db.script(DDL);
  const row = db.one<{ value: string }>`SELECT value FROM meta WHERE key = 'schema_version'`;
  if (!row)
    db.run`INSERT INTO meta (key, value) VALUES ('schema_version', ${String(SCHEMA_VERSION)})`;
  else if (Number(row.value) > SCHEMA_VERSION) {
    throw new Error(`storage schema ${row.value} is newer than this code (${SCHEMA_VERSION})`);
  }
}
