/**
 * RunIndex: one Durable Object per API key (the tenant; with auth off, one for everyone),
 * holding a listing entry for each of the key's runs (SPEC 8.2). Runs of different keys never
 * share an index, so a listing's cost grows with its own key's runs only.
 *
 * It is fed by the runs themselves: each run's Durable Object sends its entry from its
 * checkpoint through a durable outbox (durable-objects/listing/index-feed.ts), as an upsert
 * carrying the run's version, so an update that arrives late never overwrites a newer one,
 * and a retried one changes nothing. The index is a view: it can lag the runs by a moment,
 * never lose one, and a run's own `GET` is always current.
 */
import { DurableObject } from "cloudflare:workers";
import {
  encodeCursor,
  listingView,
  type ListingEntry,
  type ListingQuery,
  type ListingView,
} from "../../src/engine/listing";
import type { Env } from "../../src/env";
import { IndexStore, type UpsertOutcome } from "./index-store";
import { afterQueuedEvents } from "../turns";

export type { UpsertOutcome } from "./index-store";

export interface ListingPage {
  runs: ListingView[];
  /** The cursor of the following page; null on the last. */
  next: string | null;
}

/** The RunIndex of `owner` (an API key's hash, or "public" with auth off). */
export function runIndexOf(env: Env, owner: string) {
  return env.INDEX.get(env.INDEX.idFromName(owner));
}

interface PendingUpsert {
  entry: ListingEntry;
  settle(outcome: UpsertOutcome | Error): void;
}

export class RunIndex extends DurableObject<Env> {
  private readonly store: IndexStore;
  /** Upserts received since the last batch was written (see upsert). */
  private pending: PendingUpsert[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new IndexStore(ctx.storage);
  }

  /**
   * Stores a run's entry (idempotent; an older version than the one held is ignored). The
   * upserts that arrive together (200 runs submitted at once) are written as one batch, in
   * one transaction, so they share one commit instead of queueing for one each; each answers
   * once the batch is stored (workerd holds the answer until the commit). A batch is what
   * has queued up by the time the runtime gets to it (afterQueuedEvents), not what a timer
   * gathers: an idle index writes at once, a busy one many at a time (35 batches for the 800
   * updates of (5)'s batch, as with a timer, measured).
   */
  async upsert(entry: ListingEntry): Promise<UpsertOutcome> {
    const outcome = await new Promise<UpsertOutcome | Error>((settle) => {
      this.pending.push({ entry, settle });
      if (this.pending.length === 1) void afterQueuedEvents().then(() => this.writePending());
    });
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  private writePending(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    try {
      const outcomes = this.store.upsertAll(batch.map((p) => p.entry));
      batch.forEach((p, i) => p.settle(outcomes[i]!));
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const p of batch) p.settle(error);
    }
  }

  /** Removes a deleted run's entry for good. */
  async remove(runId: string): Promise<void> {
    this.writePending();
    this.store.remove(runId, Date.now());
  }

  /** A page of the key's runs, newest first, and the cursor of the next. */
  async list(query: ListingQuery): Promise<ListingPage> {
    this.writePending(); // a read sees every update received before it
    const rows = this.store.page(query);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      runs: page.map(listingView),
      next: rows.length > query.limit && last ? encodeCursor(last) : null,
    };
  }

  /** `GET /v1/stats`: the key's runs per status. */
  async stats() {
    this.writePending();
    return this.store.stats();
  }
}
