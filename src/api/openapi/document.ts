/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this API, generated from the zod schemas
 * that validate requests and describe responses (src/engine/plan-schema.ts, src/api/schemas/).
 * Tests check that every route the Worker serves is in it, that real responses parse with its
 * response schemas, and that `redocly lint` finds nothing to report (test/e2e/api-tools.test.ts).
 * `npm run schema` writes it to docs/openapi.json for tools that want a file.
 */
import { schemaComponents } from "./components.ts";
import { error } from "./parts.ts";
import { paths } from "./paths.ts";

/** Where a document that is not served by a Worker (docs/openapi.json) says the API is. */
export const LOCAL_SERVER = {
  url: "http://127.0.0.1:8787",
  description: "local development (npm start)",
};

type Operation = { security?: unknown[]; responses: Record<string, unknown> };

const UNAVAILABLE_OBJECT =
  "unavailable (Retry-After: 1): the Durable Object serving the request restarted before it answered, is overloaded or could not be reached: send it again";

/**
 * Every operation under /v1, and the document, may answer 500 `misconfigured` (a variable of the deployment is
 * invalid); every one under /v1 503 `unavailable` (the object serving it restarted); under the
 * bearer scheme also 401 (SPEC 6), and with REQUIRE_API_KEYS and no API_KEYS, 503: declared
 * once here rather than in each route, so a new route cannot forget them (a route that declares
 * a 503 of its own says what it adds).
 */
function withDeploymentResponses<T extends { paths: Record<string, Record<string, Operation>> }>(
  doc: T,
): T {
  for (const [path, operations] of Object.entries(doc.paths)) {
    // The document itself is built from the settings (MAX_STEPS_PER_PLAN): it can answer 500 too.
    if (!path.startsWith("/v1/") && path !== "/openapi.json") continue;
    for (const op of Object.values(operations)) {
      op.responses[500] ??= error(
        "misconfigured: a variable of the deployment (TOOLS, DESTINATIONS, MAX_STEPS_PER_PLAN, ...) is invalid; the message names it",
      );
      if (op.security?.length === 0) {
        if (path.startsWith("/v1/")) op.responses[503] ??= error(UNAVAILABLE_OBJECT);
        continue;
      }
      op.responses[401] = error(
        "missing, malformed or unknown API key (only when API_KEYS is set)",
      );
      op.responses[503] ??= error(
        `auth_not_configured: the deployment requires API_KEYS (REQUIRE_API_KEYS) and none is set; or ${UNAVAILABLE_OBJECT}`,
      );
    }
  }
  return doc;
}

const documents = new Map<number, ReturnType<typeof openApiDocument>>();

/** The document for a Worker whose plans may have at most `maxSteps` steps, served from `origin`; built once per `maxSteps`. */
export function cachedOpenApiDocument(maxSteps: number, origin: string) {
  let doc = documents.get(maxSteps);
  if (!doc) documents.set(maxSteps, (doc = openApiDocument(maxSteps)));
  return { ...doc, servers: [{ url: origin, description: "this Worker" }] };
}

/** `maxSteps`: the Worker's MAX_STEPS_PER_PLAN, so the Plan schema states the limit that applies. */
export function openApiDocument(maxSteps: number) {
  return withDeploymentResponses({
    openapi: "3.1.0",
    info: {
      title: "edgestep",
      version: "1.1",
      description:
        "A durable plan executor on Cloudflare Workers. Bearer auth applies to /v1 routes when API_KEYS is set.",
    },
    servers: [LOCAL_SERVER],
    tags: [
      { name: "plans", description: "Validate plans" },
      { name: "runs", description: "Submit, follow and control runs" },
      { name: "listing", description: "Find, count and delete runs" },
      { name: "callbacks", description: "Complete callback steps" },
      { name: "destinations", description: "Flow control per destination" },
      { name: "service", description: "Liveness and this document" },
    ],
    security: [{ bearer: [] }],
    paths: paths(),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: schemaComponents(maxSteps),
    },
  });
}
