/**
 * Tombstone (owns the `tombstone` key of the object's key-value storage): what is left of a
 * deleted run (SPEC 8.3). Its run id is never used again: every route answers 404, `create`
 * refuses it, and an Idempotency-Key that named it moves on to its next generation
 * (src/api/idempotency.ts). It holds no run data: when the run was deleted and, on the
 * first generation's tombstone, the newest generation created since (a hint that saves
 * probing every deleted generation again).
 */
const KEY = "tombstone";

export interface TombstoneRecord {
  deletedAt: number;
  /** On an Idempotency-Key's first generation: the newest generation created after it. */
  latestGeneration?: number;
}

export class Tombstone {
  constructor(private readonly kv: SyncKvStorage) {}

  read(): TombstoneRecord | undefined {
    return this.kv.get<TombstoneRecord>(KEY);
  }

  /** Called in the same synchronous turn as `deleteAll()`, so both commit together. */
  write(deletedAt: number): void {
    this.kv.put<TombstoneRecord>(KEY, { deletedAt });
  }

  /** Remembers that `generation` of this run's Idempotency-Key was created (only grows). */
  noteGeneration(generation: number): void {
    const record = this.read();
    if (!record || (record.latestGeneration ?? 0) >= generation) return;
    this.kv.put<TombstoneRecord>(KEY, { ...record, latestGeneration: generation });
  }
}
