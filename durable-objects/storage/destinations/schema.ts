/**
 * The tables of a destination's Durable Object (DestinationObject) and of the pause board
 * (PauseBoard): `CREATE ... IF NOT EXISTS`, so each object creates what it owns on first use.
 * Neither holds a run's data; a run's checkpoint is in ../schema.ts.
 */
import type { Sql } from "../sql";

const DESTINATION_DDL = `
-- one row: the destination's key, its token bucket and its pause
CREATE TABLE IF NOT EXISTS flow (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  destination TEXT NOT NULL,
  tokens REAL NOT NULL,
  refilled_at INTEGER NOT NULL,
  paused_until INTEGER NOT NULL DEFAULT 0
);
-- slots granted: one per call of a run (its ticket), until released or expired
CREATE TABLE IF NOT EXISTS leases (
  run_id TEXT NOT NULL,
  ticket TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, ticket)
);
CREATE INDEX IF NOT EXISTS leases_by_expiry ON leases (expires_at);
-- calls waiting for a slot, first asked first served
CREATE TABLE IF NOT EXISTS waiters (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  ticket TEXT NOT NULL,
  asked_at INTEGER NOT NULL,
  UNIQUE (run_id, ticket)
);
`;

const BOARD_DDL = `
-- destinations paused by a 429 or a 503 with Retry-After, until when
CREATE TABLE IF NOT EXISTS pauses (
  destination TEXT PRIMARY KEY,
  until INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS pauses_by_until ON pauses (until);
`;

export function createDestinationTables(db: Sql): void {
  db.script(DESTINATION_DDL);
}

export function createBoardTables(db: Sql): void {
  db.script(BOARD_DDL);
}
