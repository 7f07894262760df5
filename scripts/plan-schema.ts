/** Writes docs/plan.schema.json from the plan's zod schema: `npm run schema`. */
import { writeFileSync } from "node:fs";
import { planJsonSchema } from "../src/engine/plan-json-schema.ts";

const path = new URL("../docs/plan.schema.json", import.meta.url);
writeFileSync(path, `${JSON.stringify(planJsonSchema(), null, 2)}\n`);
console.log(`wrote ${path.pathname}`);
