/**
 * One small tagged-template helper over `ctx.storage.sql`: values become bound
 * parameters, never SQL text; a `raw()` fragment (a constant of ours) is inlined.
 * `db.all<Row>`SELECT * FROM steps WHERE idx = ${i}``.
 */
export type SqlValue = string | number | null;

class Raw {
  constructor(readonly text: string) {}
}

/** A trusted SQL fragment (never user input), inlined as text. */
export function raw(text: string): Raw {
  return new Raw(text);
}

/**
 * A statement's text, built once per call site: a tagged template's strings array is the
 * same object at every call, and its `raw()` fragments are constants of that call site.
 */
const texts = new WeakMap<TemplateStringsArray, { text: string; raws: (Raw | null)[] }>();

function textOf(strings: TemplateStringsArray, values: readonly (SqlValue | Raw)[]): string {
  const raws = values.map((v) => (v instanceof Raw ? v : null));
  const cached = texts.get(strings);
  if (cached && cached.raws.every((r, i) => r === raws[i])) return cached.text;
  let text = strings[0]!;
  raws.forEach((r, i) => {
    text += (r ? r.text : "?") + strings[i + 1]!;
  });
  texts.set(strings, { text, raws });
  return text;
}

const WRITTEN_TABLE = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)/i;
const writtenTables = new Map<string, string | null>();

/** The table a write statement names (null when it is not one of those forms). */
function writtenTable(text: string): string | null {
  let table = writtenTables.get(text);
  if (table === undefined) writtenTables.set(text, (table = WRITTEN_TABLE.exec(text)?.[1] ?? null));
  return table;
}

/** The table a held-back kind's rows go to (see `Sql.later`). */
const tableOf = (kind: string): string => kind.split(".", 1)[0]!;

/** What the rows of one held-back batch may add up to (see `Sql.later`). */
export const HELD_BATCH_BYTES = 512 * 1024;

export class Sql {
  /** Told after every write statement (status readers wait for changes on it). */
  onWrite: (() => void) | undefined;
  /** Counts writes; `lastWrite` and `lastReset` hold its value after the latest ones. */
  private writes = 0;
  private readonly lastWrite = new Map<string, number>();
  /** After a write whose table is unknown (DDL), a rolled back transaction or a wipe. */
  private lastReset = 0;
  /** True while a memo of one table reads it (its held rows, if any, are written already). */
  private memoRead = false;
  private readonly memos = new Map<
    string,
    { table: string | null; readAt: number; value: unknown }
  >();

  /** Rows held back by `later`, by kind: the table they go to, the statement that writes them. */
  private readonly held = new Map<
    string,
    { table: string; rows: unknown[]; bytes: number; write: (rows: never[]) => void }
  >();

  constructor(
    private readonly sql: SqlStorage,
    /**
     * What a write to each table or view writes, its triggers' writes included (a table not
     * named writes only itself), for memos and held rows.
     */
    private readonly triggeredWrites: Readonly<Record<string, readonly string[]>> = {},
  ) {}

  /**
   * Holds `row` back to be written with the other rows of its `kind` by `write`, in one
   * statement: before the next statement that reads, or writes the table they go to (so every
   * read sees them, and writes to a table keep their order), and at the latest in a
   * microtask, before the turn ends, so they commit with the change they belong to. For rows
   * written many to a turn (events, steps that answer at once): one statement costs the
   * runtime about as much as a hundred rows. `kind` is the table the rows go to, optionally
   * followed by `.` and a name (`events`, `steps.succeededAtOnce`). `bytes` (about the row's
   * size as JSON) keeps a batch under SQLite's 2 MB per value: a batch that would grow past
   * HELD_BATCH_BYTES is written first.
   */
  later<R>(kind: string, row: R, write: (rows: R[]) => void, bytes = 0): void {
    if ((this.held.get(kind)?.bytes ?? 0) + bytes > HELD_BATCH_BYTES) this.flushHeld();
    if (this.held.size === 0) queueMicrotask(() => this.flushHeld());
    const batch = this.held.get(kind);
    if (batch) {
      batch.rows.push(row);
      batch.bytes += bytes;
    } else {
      const table = tableOf(kind);
      this.held.set(kind, { table, rows: [row], bytes, write: write as (rows: never[]) => void });
    }
  }

  /** Writes the rows held back (see `later`), oldest kind first. */
  flushHeld(): void {
    if (this.held.size === 0) return;
    const batches = [...this.held.values()];
    this.held.clear(); // a batch's own statement must not write the ones after it first
    for (const batch of batches) batch.write(batch.rows as never[]);
  }

  /**
   * Runs `body` in one transaction (the storage's `transactionSync`). Rows held back before it
   * belong to the turn and are written first; rows held back within it are written within
   * it, or dropped with it should it throw, and then what was read since is read again.
   */
  transaction(transactionSync: (body: () => void) => void, body: () => void): void {
    this.flushHeld();
    try {
      transactionSync(() => {
        body();
        this.flushHeld();
      });
    } catch (err) {
      this.dropHeld();
      this.changed();
      throw err;
    }
  }

  /** The storage is being wiped: nothing held back may be written after it. */
  dropHeld(): void {
    this.held.clear();
  }

  /**
   * `read()`'s answer, read again only after a write to `table`, by a statement or by the
   * triggers of a write to another (see `triggeredWrites`), or with no table after any write:
   * for the reads that many callers repeat between two writes (the run row, what the alarm
   * points at). Every statement costs the runtime a call (and `wrangler dev` a trace span),
   * and a status poll or a commit point would otherwise read the same rows several times. The
   * read must read `table` alone. The answer is shared: it must not be changed (the owners
   * freeze it).
   */
  memo<T>(key: string, table: string | null, read: () => T): T {
    // Rows held for other tables stay held: a memo's read reads its own table only.
    if (table === null || this.holdsRowsWriting(table)) this.flushHeld();
    const hit = this.memos.get(key);
    if (hit && this.unchangedSince(hit.table, hit.readAt)) return hit.value as T;
    const outer = this.memoRead;
    this.memoRead = table !== null;
    try {
      const value = read();
      this.memos.set(key, { table, readAt: this.writes, value });
      return value;
    } finally {
      this.memoRead = outer;
    }
  }

  /**
   * Sets the memo `key` (of `table`) to `value`, the answer its read would give now: for an
   * owner that has just written the row and knows all of it, so that it is not read back.
   */
  remember<T>(key: string, table: string, value: T): void {
    this.memos.set(key, { table, readAt: this.writes, value });
  }

  /** The storage changed other than by a statement of ours (a rolled back transaction, a wipe). */
  changed(): void {
    this.lastReset = ++this.writes;
  }

  private unchangedSince(table: string | null, readAt: number): boolean {
    if (table === null) return this.writes === readAt;
    return this.lastReset <= readAt && (this.lastWrite.get(table) ?? 0) <= readAt;
  }

  private wrote(text: string): void {
    const table = writtenTable(text);
    if (table === null) return this.changed();
    const at = ++this.writes;
    for (const written of this.tablesWrittenBy(table)) this.lastWrite.set(written, at);
  }

  private tablesWrittenBy(table: string): readonly string[] {
    return this.triggeredWrites[table] ?? [table];
  }

  all<T>(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): T[] {
    return this.exec<T>(textOf(strings, values), values);
  }

  one<T>(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): T | undefined {
    return this.all<T>(strings, ...values)[0];
  }

  run(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): void {
    const text = textOf(strings, values);
    try {
      this.exec(text, values);
    } finally {
      this.wrote(text);
    }
    this.onWrite?.();
  }

  /**
   * Writes the held rows before a statement that could see them or reorder them: a read
   * (but a memo's, see `memo`), or a write to a table they go to. A write to another table
   * leaves them held, so a turn's rows of a kind still go in one statement: no write of ours
   * reads another table (json_each aside), and a write goes to the tables `triggeredWrites`
   * names.
   */
  private flushBefore(text: string): void {
    if (this.held.size === 0) return;
    const table = writtenTable(text);
    if (table === null ? this.memoRead : !this.holdsRowsFor(this.tablesWrittenBy(table))) return;
    this.flushHeld();
  }

  private holdsRowsFor(tables: readonly string[]): boolean {
    for (const batch of this.held.values()) if (tables.includes(batch.table)) return true;
    return false;
  }

  /** Whether writing the held rows would write `table`, themselves or through triggers. */
  private holdsRowsWriting(table: string): boolean {
    for (const batch of this.held.values())
      if (this.tablesWrittenBy(batch.table).includes(table)) return true;
    return false;
  }

  private exec<T>(text: string, values: readonly (SqlValue | Raw)[]): T[] {
    this.flushBefore(text);
    const bound = values.filter((v): v is SqlValue => !(v instanceof Raw));
    return this.sql.exec(text, ...bound).toArray() as T[];
  }

  tableExists(name: string): boolean {
    return (
      this.one`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${name}` !==
      undefined
    );
  }

  /** Runs statements with no parameters (schema DDL). */
  script(text: string): void {
    this.flushHeld();
    try {
      this.sql.exec(text);
    } finally {
      this.changed();
    }
  }
}
