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

/** The name a kind of held rows goes by in `triggeredWrites` (see `Sql.later`). */
const tableOf = (kind: string): string => kind.split(".", 1)[0]!;

/** What the rows held back at once may add up to (see `Sql.later`). */
export const HELD_BATCH_BYTES = 512 * 1024;

/**
 * The view every held-back row is inserted into (see `Sql.later`): a row of each kind has its
 * own trigger (`heldRowsTrigger`), which writes it where that kind's rows belong.
 */
export const HELD_ROWS_VIEW = `CREATE VIEW IF NOT EXISTS held_rows (kind, f0, f1, f2, f3, f4, text)
  AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0;`;

/** How many fields a held row has at most (the view's `f0` to `f4`), its text aside. */
const HELD_FIELDS = 5;

/**
 * The trigger that writes the held-back rows of `kind` (see `Sql.later`): `body` is its owner's
 * statement, reading the row's fields as `NEW.f0`, `NEW.f1`, ... (columns, not JSON: a field
 * costs no parse per row) and its text as `NEW.text`.
 */
export function heldRowsTrigger(kind: string, body: string): string {
  return `CREATE TRIGGER IF NOT EXISTS held_${kind.replace(".", "_")} INSTEAD OF INSERT ON held_rows
  WHEN NEW.kind = '${kind}' BEGIN ${body}; END;`;
}

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
  private executed = 0;

  /** Rows held back by `later`, in order, as the view's columns: kind, f0 to f4, text. */
  private held: SqlValue[][] = [];
  private heldBytes = 0;
  /** The tables the held rows write, their triggers' writes included. */
  private readonly heldWrites = new Set<string>();

  constructor(
    private readonly sql: SqlStorage,
    /**
     * What a write to each table or view writes, its triggers' writes included (a table not
     * named writes only itself), for memos and held rows.
     */
    private readonly triggeredWrites: Readonly<Record<string, readonly string[]>> = {},
  ) {}

  /** The statements run so far: what a change costs (the tests count them). */
  get statements(): number {
    return this.executed;
  }

  /**
   * Holds a row back, to be written with every other row held in the turn, of any kind, in one
   * statement: an insert into the view `held_rows`, whose trigger for `kind` (`heldRowsTrigger`)
   * writes it. They are written before the next statement that reads, or that writes a table
   * they write (so every read sees them, and writes to a table keep their order), and at the
   * latest in a microtask, before the turn ends, so they commit with the change they belong to.
   * For rows written many to a turn (events, a step's start and success): one statement costs
   * the runtime about as much as a hundred rows. `kind` is the table or view the rows go to,
   * optionally followed by `.` and a name (`events`, `steps.succeededAtOnce`). `text` (a step's
   * output, an event's data) is the row's one large field: held rows that would add up to
   * more than HELD_BATCH_BYTES are written first, and a text of half that is written at once,
   * alone, so that escaped into JSON it cannot pass SQLite's 2 MB per value.
   */
  later(kind: string, fields: readonly SqlValue[], text: string | null = null): void {
    if (fields.length > HELD_FIELDS)
      throw new Error(`a held row has at most ${HELD_FIELDS} fields`);
    const row: SqlValue[] = [kind, ...fields];
    while (row.length <= HELD_FIELDS) row.push(null);
    row.push(text);
    const bytes = text?.length ?? 0;
    if (bytes > HELD_BATCH_BYTES / 2) {
      this.flushHeld();
      const written = this.tablesWrittenBy(tableOf(kind));
      this.writeHeld(`INSERT INTO held_rows VALUES (?, ?, ?, ?, ?, ?, ?)`, written, row);
      return;
    }
    if (this.heldBytes + bytes > HELD_BATCH_BYTES) this.flushHeld();
    if (this.held.length === 0) queueMicrotask(() => this.flushHeld());
    this.held.push(row);
    this.heldBytes += bytes;
    for (const table of this.tablesWrittenBy(tableOf(kind))) this.heldWrites.add(table);
  }

  /** Writes the rows held back (see `later`), in the order they were held, in one statement. */
  flushHeld(): void {
    if (this.held.length === 0) return;
    const rows = this.held;
    const written = [...this.heldWrites];
    this.dropHeld(); // its statement must not write them again first
    this.writeHeld(
      `INSERT INTO held_rows SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3,
      value ->> 4, value ->> 5, value ->> 6 FROM json_each(?)`,
      written,
      [JSON.stringify(rows)],
    );
  }

  /** Runs a statement that writes held rows; `written`: the tables their triggers write. */
  private writeHeld(text: string, written: readonly string[], values: SqlValue[]): void {
    try {
      this.executed++;
      this.sql.exec(text, ...values);
    } finally {
      const at = ++this.writes;
      for (const table of written) this.lastWrite.set(table, at);
    }
    this.onWrite?.();
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
    this.held = [];
    this.heldBytes = 0;
    this.heldWrites.clear();
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
    if (table === null || this.heldWrites.has(table)) this.flushHeld();
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
   * (but a memo's, see `memo`), or a write to a table they write. A write to other tables
   * leaves them held, so a turn's rows still go in one statement: no write of ours reads
   * another table (json_each aside), and a write goes to the tables `triggeredWrites` names.
   */
  private flushBefore(text: string): void {
    if (this.held.length === 0) return;
    const table = writtenTable(text);
    if (
      table === null
        ? this.memoRead
        : !this.tablesWrittenBy(table).some((t) => this.heldWrites.has(t))
    )
      return;
    this.flushHeld();
  }

  private exec<T>(text: string, values: readonly (SqlValue | Raw)[]): T[] {
    this.flushBefore(text);
    this.executed++;
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
    this.executed++;
    try {
      this.sql.exec(text);
    } finally {
      this.changed();
    }
  }
}
