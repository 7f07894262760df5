/** The v1 schemas (src/api/schemas.ts) that the listing schemas (listing.ts) build on. */
export { RUN_STATUSES, runStatusSchema, runStatusValueSchema } from "../schemas.ts";
