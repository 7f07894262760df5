/** The built-in `http` tool (SPEC 4). */
import { z } from "zod";
import { dataRecord, isObject } from "../engine/data-record";
import {
  bodiless,
  HEADER_NAME,
  HEADER_VALUE,
  HEADER_VALUE_RULE,
  sendHttp,
  textValue,
  type Fetcher,
  type UrlCheck,
} from "./http-client";
import { invalidParams, type Tool } from "./tool";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

/** Header names are HTTP tokens; values are printable ASCII (HEADER_VALUE). */
export const headersSchema = dataRecord(
  z.string().regex(HEADER_VALUE, HEADER_VALUE_RULE),
).superRefine((headers, ctx) => {
  for (const name of Object.keys(headers)) {
    if (!HEADER_NAME.test(name))
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `${JSON.stringify(name)} is not a valid HTTP header name`,
        // About the name: wrong whatever the value, a template too (see decidedWhenRun).
        params: { whateverTheValue: true },
      });
  }
});

export const httpParamsSchema = z
  .strictObject({
    url: z.string().min(1),
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(METHODS))
      .default("GET"),
    headers: headersSchema.optional(),
    query: dataRecord(z.unknown()).optional(),
    body: z.unknown().optional(),
  })
  // fetch cannot send a body with these: the call would go out without what the plan meant.
  .superRefine((p, ctx) => {
    if (p.body !== undefined && p.body !== null && bodiless(p.method))
      ctx.addIssue({
        code: "custom",
        path: ["body"],
        message: `a ${p.method} request has no body: send the values as "query", or use POST`,
      });
  });

export function httpTool(fetcher: Fetcher, checkUrl: UrlCheck): Tool {
  return {
    name: "http",
    params: httpParamsSchema,
    urlParams: ["url"],
    async invoke(params, call) {
      const parsed = httpParamsSchema.safeParse(withTextHeaders(params));
      if (!parsed.success) return invalidParams("http", parsed.error);
      return sendHttp(parsed.data, call, fetcher, checkUrl);
    },
  };
}

/**
 * A header written as a whole-value template (`"${input.n}"`) takes the value's type: a number,
 * an array, an object. It is sent as text, as a query value is (arrays joined with ",",
 * objects as JSON); null leaves the header out.
 */
export function withTextHeaders(params: unknown): unknown {
  if (!isObject(params) || !isObject(params.headers)) return params;
  const headers = Object.entries(params.headers)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([name, value]) => [name, textValue(value)]);
  return { ...params, headers: Object.fromEntries(headers) };
}
