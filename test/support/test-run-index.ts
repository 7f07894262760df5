/**
 * TestRunIndex: the RunIndex the workers tests run, with faults a test can inject: updates
 * that fail (an index that cannot be reached), or that hang until the index is restarted
 * (a restart in the middle of an update), and reads that fail.
 */
import { RunIndex, type UpsertOutcome } from "../../durable-objects/run-index/run-index";
import type { ListingEntry, ListingQuery } from "../../src/engine/listing";

const FAILING_KEY = "test:failing-updates";
const FAILING_READS_KEY = "test:failing-reads";

export class TestRunIndex extends RunIndex {
  /** Updates that hang until this instance ends (in memory: a restart clears it). */
  private holding = false;

  /** The next `n` updates (upserts and removals) fail, as an unreachable index would. */
  async failUpdates(n: number): Promise<void> {
    this.ctx.storage.kv.put(FAILING_KEY, n);
  }

  /** The next `n` reads (listings, stats) fail. */
  async failReads(n: number): Promise<void> {
    this.ctx.storage.kv.put(FAILING_READS_KEY, n);
  }

  /** From now on, updates never answer, until this instance is restarted. */
  async holdUpdates(): Promise<void> {
    this.holding = true;
  }

  /** Ends this instance as a crash would: memory is lost (updates in flight fail), storage stays. */
  async restart(): Promise<void> {
    this.ctx.abort("test: index restarted");
  }

  override async upsert(entry: ListingEntry): Promise<UpsertOutcome> {
    await this.fault();
    return super.upsert(entry);
  }

  override async remove(runId: string): Promise<void> {
    await this.fault();
    return super.remove(runId);
  }

  override async list(query: ListingQuery) {
    this.readFault();
    return super.list(query);
  }

  override async stats() {
    this.readFault();
    return super.stats();
  }

  private readFault(): void {
    const failing = this.ctx.storage.kv.get<number>(FAILING_READS_KEY) ?? 0;
    if (failing === 0) return;
    this.ctx.storage.kv.put(FAILING_READS_KEY, failing - 1);
    throw new Error("test: the index cannot be read");
  }

  private async fault(): Promise<void> {
    const failing = this.ctx.storage.kv.get<number>(FAILING_KEY) ?? 0;
    if (failing > 0) {
      this.ctx.storage.kv.put(FAILING_KEY, failing - 1);
      throw new Error("test: the index is unreachable");
    }
    if (this.holding) await new Promise<never>(() => {});
  }
}
