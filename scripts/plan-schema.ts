/**
 * Writes the documents generated from the zod schemas, for tools that want files:
 * docs/plan.schema.json (the plan's JSON Schema, for editors and validators) and
 * docs/openapi.json (the OpenAPI document a Worker serves at /openapi.json, with the local
 * server and the default MAX_STEPS_PER_PLAN). `npm run schema`; tests fail when either is stale.
 */
import { writeFileSync } from "node:fs";
import { openApiDocument } from "../src/api/openapi/document.ts";
import { DEFAULT_MAX_STEPS } from "../src/engine/plan-schema.ts";
import { planJsonSchema } from "../src/engine/plan-json-schema.ts";

const documents = {
  "plan.schema.json": planJsonSchema(),
  "openapi.json": openApiDocument(DEFAULT_MAX_STEPS),
};
for (const [name, document] of Object.entries(documents)) {
  const path = new URL(`../docs/${name}`, import.meta.url);
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote ${path.pathname}`);
}
