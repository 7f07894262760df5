/**
 * PauseBoard: one Durable Object (named BOARD_NAME) where destinations publish their pauses
 * (SPEC 10), so that runs in other isolates learn of them without asking each destination:
 * every isolate reads the board now and then, in the background (destinations/pause-cache.ts),
 * never on a call's path. `GET /v1/destinations` finds unlisted destinations here. It holds
 * host names and times, nobody's runs; a pause is forgotten an hour after it ended.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { PauseTable } from "../storage/destinations/pause-table";
import { createBoardTables } from "../storage/destinations/schema";
import { Sql } from "../storage/sql";

/** The one pause board is named this. */
export const BOARD_NAME = "board";

/** How long an ended pause stays on the board (its destination stays listed). */
const FORGET_AFTER_MS = 3_600_000;

/** A pause as the board hands it out: how long it still lasts, on nobody's clock but its own. */
export interface PauseNotice {
  destination: string;
  remainingMs: number;
}

export class PauseBoard extends DurableObject<Env> {
  private readonly pauses: PauseTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const db = new Sql(ctx.storage.sql);
    createBoardTables(db);
    this.pauses = new PauseTable(db);
  }

  /** A destination is paused for `ms` from now (a later end extends it, an earlier one does not shorten it). */
  async publish(destination: string, ms: number): Promise<void> {
    const now = Date.now();
    this.pauses.extend(destination, now + ms);
    this.pauses.prune(now - FORGET_AFTER_MS);
  }

  /** The pauses in force now. */
  async current(): Promise<PauseNotice[]> {
    const now = Date.now();
    return this.pauses
      .endingAfter(now)
      .map((p) => ({ destination: p.destination, remainingMs: p.until - now }));
  }

  /** Destinations paused in the last hour or now, latest end first. */
  async recent(): Promise<string[]> {
    return this.pauses.endingAfter(Date.now() - FORGET_AFTER_MS).map((p) => p.destination);
  }
}
