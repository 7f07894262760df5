/** zod for every request input that is not a plan: query strings and control bodies. */
import type { Context } from "hono";
import { z } from "zod";
import { joinPath, zodIssues } from "../engine/validate";
import { InvalidPlanError, type Issue } from "../errors";
import { readJson, type JsonBody } from "./body";

/** A fixed limit, not MAX_PLAN_BYTES: these bodies are a few fields, never a plan. */
const CONTROL_BODY: JsonBody = {
  maxBytes: 64 * 1024,
  what: "request body",
  limitName: "the 64 KiB limit of control and callback bodies",
  at: "body",
  code: "invalid_request",
  whenEmpty: {},
};

export function parseInput<T extends z.ZodType>(
  schema: T,
  value: unknown,
  prefix: string,
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = zodIssues(result.error).map((i) => ({ ...i, path: joinPath(prefix, i.path) }));
  throw new InvalidPlanError(issues, "invalid_request");
}

/**
 * The request's query string through `schema`, each parameter once: a parameter given twice
 * (`?status=a&status=b`, `?limit=1&limit=500`) is a 400 naming it, not silently its first
 * value. Those in `repeatable` (a listing's `tag`) arrive as an array.
 */
export function parseQuery<T extends z.ZodType>(
  c: Context<any>,
  schema: T,
  repeatable: readonly string[] = [],
): z.output<T> {
  const raw: Record<string, string | string[]> = {};
  const issues: Issue[] = [];
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (repeatable.includes(name)) raw[name] = values;
    else if (values.length === 1) raw[name] = values[0]!;
    else
      issues.push({
        path: `query.${name}`,
        message: `given ${values.length} times: give it once (a comma list where it takes several values)`,
      });
  }
  if (issues.length > 0) throw new InvalidPlanError(issues, "invalid_request");
  return parseInput(schema, raw, "query");
}

/** What a route takes that takes nothing (a query, a control's body): a field sent is a 400, not ignored. */
export const NOTHING = z.strictObject({});

/** For a route that takes no query parameter: one sent is a 400 naming it, not ignored. */
export function takesNoQuery(c: Context<any>): void {
  parseQuery(c, NOTHING);
}

/**
 * A control route's optional JSON body: absent or empty means `{}`. Not a plan: its 400s are
 * `invalid_request`, at `body`.
 */
export async function readControlBody<T extends z.ZodType>(
  c: Context<any>,
  schema: T,
): Promise<z.output<T>> {
  const raw = await readJson(c, CONTROL_BODY);
  return parseInput(schema, raw, "body");
}
