/**
 * A JSON object whose keys are the user's data (step params, a query, headers). zod's
 * `z.record` builds a new object and leaves out a key named `__proto__` (assigning it would
 * set the new object's prototype), so `{"__proto__": 1}` would silently lose data. This
 * schema checks each own value against `values` and returns the object as given: every key
 * survives, and nothing is ever assigned through a prototype setter.
 */
import { z } from "zod";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** `values` must not transform (its output is not used): checks only, such as a string pattern. */
export function dataRecord<T extends z.ZodType>(values: T) {
  const { $schema: _, ...valueDoc } = z.toJSONSchema(values, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return z
    .custom<Record<string, z.output<T>>>(isObject, {
      error: (issue) => `expected an object, received ${typeName(issue.input)}`,
    })
    .superRefine((record, ctx) => {
      for (const [key, value] of Object.entries(record)) {
        const checked = values.safeParse(value);
        if (checked.success) continue;
        for (const issue of checked.error.issues) {
          ctx.addIssue({ code: "custom", message: issue.message, path: [key, ...issue.path] });
        }
      }
    })
    .meta({ type: "object", propertyNames: { type: "string" }, additionalProperties: valueDoc });
}
