/**
 * What the OpenAPI `paths` share: responses that `$ref` the components of ./components.ts, the
 * `runId` path parameter, and query parameters made from the zod schemas routes validate their
 * queries with.
 */
import { z } from "zod";
import { ref } from "./components.ts";

type JsonSchema = Record<string, unknown>;

export const json = (id: string) => ({ "application/json": { schema: ref(id) } });
export const ok = (description: string, id: string) => ({ description, content: json(id) });
export const error = (description: string) => ({ description, content: json("Error") });
export const body = (id: string, required = true) => ({ required, content: json(id) });

export const notFound = error("no such run (or not yours)");
export const conflict = error("not allowed in the run's current status");
export const badRequest = error("a bad parameter or body: `issues` name it");
export const tooLarge = error("body larger than its limit");
export const indexUnavailable = {
  ...error(
    "unavailable: the caller's run index cannot be read right now (retry after Retry-After); " +
      "or auth_not_configured: the deployment requires API_KEYS and none is set",
  ),
  headers: { "Retry-After": { description: "seconds to wait", schema: { type: "integer" } } },
};

export const runId = {
  name: "runId",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^run_[0-9a-f]{32}$" },
};

/** One query parameter per field of a route's query schema, in the shape a client sends. */
export function queryParams(schema: z.ZodObject, repeated: string[] = []) {
  return Object.entries(schema.shape).map(([name, field]) => {
    const {
      $schema: _,
      description,
      ...fieldSchema
    } = z.toJSONSchema(field as z.ZodType, {
      io: "input",
      unrepresentable: "any",
    }) as JsonSchema;
    return {
      name,
      in: "query",
      required: false,
      ...(typeof description === "string" && { description }),
      schema: repeated.includes(name) ? { type: "array", items: { type: "string" } } : fieldSchema,
      ...(repeated.includes(name) && { style: "form", explode: true }),
    };
  });
}
