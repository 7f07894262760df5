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

export class Sql {
  /** Told after every write statement (status readers wait for changes on it). */
  onWrite: (() => void) | undefined;

  constructor(private readonly sql: SqlStorage) {}

  all<T>(strings: TemplateStringsArray, ...values: (SqlValue | Raw)[]): T[] {
    let text = strings[0]!;
    const bound: SqlValue[] = [];
    values.forEach((v, i) => {
      if (v instanceof Raw) text += v.text;
      else {
        text += "?";
        bound.push(v);
      }
      text += strings[i + 1]!;
    });
    return this.sql.exec(text, ...bound).toArray() as T[];
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
