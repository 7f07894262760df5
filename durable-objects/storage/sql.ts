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

export class Sql {
  /** Told after every write statement (status readers wait for changes on it). */
  onWrite: (() => void) | undefined;

  constructor(private readonly sql: SqlStorage) {}

  all<T>(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): T[] {
    const bound = values.filter((v): v is SqlValue => !(v instanceof Raw));
    return this.sql.exec(textOf(strings, values), ...bound).toArray() as T[];
  }

  one<T>(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): T | undefined {
    return this.all<T>(strings, ...values)[0];
  }

  run(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): void {
    this.all(strings, ...values);
    this.onWrite?.();
  }

  tableExists(name: string): boolean {
    return (
      this.one`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${name}` !==
      undefined
    );
  }

  /** Runs statements with no parameters (schema DDL). */
  script(text: string): void {
    this.sql.exec(text);
  }
}
