/**
 * The plan's JSON Schema (docs/plan.schema.json), generated from the zod schema, for editors
 * and validators: it compiles in ajv's strict mode (test/e2e/api-tools.test.ts), and its
 * relative `$id` resolves to wherever the file is read from.
 */
import { z } from "zod";
import { HARD_MAX_STEPS, planSchema } from "./plan-schema.ts";

/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYWORDS = new Set(["default", "const", "enum", "examples"]);

/**
 * zod writes a union of primitive types as `type: ["string", "boolean"]`, which strict
 * validators (ajv's strictTypes) refuse without `allowUnionTypes`: spell it as `anyOf`.
 */
function unionTypesAsAnyOf(node: unknown): void {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) return node.forEach(unionTypesAsAnyOf);
  const schema = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(schema)) {
    if (!DATA_KEYWORDS.has(key)) unionTypesAsAnyOf(value);
  }
  if (Array.isArray(schema.type)) {
    schema.anyOf = schema.type.map((type: unknown) => ({ type }));
    delete schema.type;
  }
}

export function planJsonSchema(): Record<string, unknown> {
  const { $schema, ...schema } = z.toJSONSchema(planSchema(HARD_MAX_STEPS), {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  unionTypesAsAnyOf(schema);
  return { $schema, $id: "plan.schema.json", title: "edgestep plan", ...schema };
}
