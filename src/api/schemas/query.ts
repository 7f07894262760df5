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

const ISO_DATE = z.iso.date();

/** A `+` sent unencoded in a query string arrives as a space: before a zone's hours it was one. */
const plusFromSpace = (text: unknown) =>
  typeof text === "string" && text.includes("T")
    ? text.replace(/ (\d{2}(?::?\d{2})?)$/, "+$1")
    : text;

/** Whether an ISO-8601 time names a fraction of a millisecond (`.2431`), which Date.parse drops. */
const finerThanMs = (text: string) => /\.\d{3}\d*[1-9]/.test(text);

/**
 * An ISO-8601 date (`2026-11-01`, midnight UTC) or date and time with its zone
 * (`2026-11-01T09:00:00Z`), parsed to epoch milliseconds; a space before the zone's hours is
 * read as the `+` it was. `up`: a fraction finer than a millisecond rounds up (for an exclusive
 * upper bound: what was created at .243 is before .2431), else it is dropped.
 */
export function instantParam(round: "down" | "up" = "down") {
  return z
    .preprocess(
      plusFromSpace,
      z
        .string()
        .refine((text) => ISO_TIME.safeParse(text).success || ISO_DATE.safeParse(text).success, {
          message:
            "expected an ISO-8601 date (2026-11-01) or a date and time with its zone (2026-11-01T09:00:00Z, or +01:00, written %2B01:00 in a URL)",
        }),
    )
    .transform((text) => Date.parse(text) + (round === "up" && finerThanMs(text) ? 1 : 0))
    .describe("ISO-8601 date or date-time with its zone (e.g. 2026-11-01T09:00:00Z), exclusive");
}
