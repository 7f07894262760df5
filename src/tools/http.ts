/** The built-in `http` tool (SPEC 4). */
import { z } from "zod";
import { sendHttp, type Fetcher, type UrlCheck } from "./http-client";
import type { Tool } from "./tool";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export const httpParamsSchema = z.strictObject({
  url: z.string().min(1),
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(METHODS))
    .default("GET"),
  headers: z.record(z.string(), z.string()).optional(),
  query: z.record(z.string(), z.unknown()).optional(),
  body: z.unknown().optional(),
});

export function httpTool(fetcher: Fetcher, checkUrl: UrlCheck): Tool {
  return {
    name: "http",
    params: httpParamsSchema,
    urlParams: ["url"],
    async invoke(params, call) {
      const parsed = httpParamsSchema.safeParse(params);
      if (!parsed.success) {
        return { ok: false, category: "invalid_data", message: `invalid http params: ${parsed.error.message}` };
      }
      return sendHttp(parsed.data, call, fetcher, checkUrl);
    },
  };
}
