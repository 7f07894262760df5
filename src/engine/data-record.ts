/**
 * A JSON object whose keys are the user's data (step params, a query, headers). zod's
 * `z.record` builds a new object and leaves out a key named `__proto__` (assigning it would
 * set the new object's prototype), so `{"__proto__": 1}` would silently lose data. This
 * schema checks each own value against `values` and returns the object as given: every key
 * survives, and nothing is ever assigned through a prototype setter.
 */
import { z } from "zod";

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value's JSON type as a message names it: `null`, `array`, `object`, `string`, ... */
export function typeName(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** What a record's keys and size may be, beside its values (e.g. a plan's `tags`). */
export interface RecordLimits {
  /** Each key must match it (an issue at the key's path). */
  key?: { pattern: RegExp; message: string };
  /** At most `count` entries (an issue at the record's path). */
  maxEntries?: { count: number; message: string };
}

/** `values` must not transform (its output is not used): checks only, such as a string pattern. */
export function dataRecord<T extends z.ZodType>(values: T, limits: RecordLimits = {}) {
  const { $schema: _, ...valueDoc } = z.toJSONSchema(values, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  const { key, maxEntries } = limits;
  return z
    .custom<Record<string, z.output<T>>>(isObject, {
      error: (issue) => `expected an object, received ${typeName(issue.input)}`,
    })
    .superRefine((record, ctx) => {
      const entries = Object.entries(record);
      if (maxEntries && entries.length > maxEntries.count)
        ctx.addIssue({ code: "custom", message: maxEntries.message });
      for (const [name, value] of entries) {
        if (key && !key.pattern.test(name))
          ctx.addIssue({ code: "custom", message: key.message, path: [name] });
        const checked = values.safeParse(value);
        if (checked.success) continue;
        for (const issue of checked.error.issues) {
          ctx.addIssue({ code: "custom", message: issue.message, path: [name, ...issue.path] });
        }
      }
    })
    .meta({
      type: "object",
      propertyNames: { type: "string", ...(key && { pattern: key.pattern.source }) },
      additionalProperties: valueDoc,
      ...(maxEntries && { maxProperties: maxEntries.count }),
    });
}
