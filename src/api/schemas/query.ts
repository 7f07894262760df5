/**
 * Building blocks for query strings: every value arrives as text, and a bad one is an
 * issue at the parameter itself (`query.status`), not at an index inside it.
 */
import { z } from "zod";
import { ISO_TIME } from "../../engine/time-limits.ts";

/**
 * A comma list of `values` (`status=failed,partial`), parsed to an array. Empty entries are
 * ignored; an unknown one is an issue naming it and the accepted values.
 */
export function commaList<const T extends readonly [string, ...string[]]>(values: T) {
  const accepted = new Set<string>(values);
  return z
    .string()
    .transform((text, ctx) => {
      const items = text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      const unknown = items.find((s) => !accepted.has(s));
      if (unknown !== undefined || items.length === 0) {
        ctx.addIssue({
          code: "custom",
          message: `${unknown === undefined ? "empty list" : `unknown value "${unknown.slice(0, 64)}"`}: expected a comma list of ${values.join(", ")}`,
        });
        return z.NEVER;
      }
      return [...new Set(items)] as T[number][];
    })
    .describe(`a comma list of: ${values.join(", ")}`);
}

/**
 * A whole number given as decimal digits, within [min, max]. Digits only: `Number()` reads
 * `after=` as 0 (a page that silently skips step 0) and takes `0x10` or `+5`.
 */
export function intParam(min: number, max: number, fallback?: number) {
  const value = z.coerce.number().int().min(min).max(max);
  return z.preprocess(
    (text, ctx) => {
      if (typeof text !== "string" || /^\d{1,16}$/.test(text)) return text;
      ctx.addIssue({ code: "custom", message: `expected a whole number from ${min} to ${max}` });
      return z.NEVER;
    },
    // Inside, so the OpenAPI document still shows the default.
    fallback === undefined ? value : value.default(fallback),
  );
}

/** An ISO-8601 date (`2026-11-01`) or date-time with an offset (`2026-11-01T09:00:00Z`), parsed to epoch milliseconds. */
export const instantParam = z
  .union([ISO_TIME, z.iso.date()], {
    error: "expected an ISO-8601 date or date-time, e.g. 2026-11-01T09:00:00Z",
  })
  .transform((text) => Date.parse(text))
  .describe("ISO-8601 date or date-time (e.g. 2026-11-01T09:00:00Z), exclusive");
