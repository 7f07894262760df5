/**
 * SPEC 10 (flow control per destination): `GET /v1/destinations`. The route answers with these,
 * and the typed client and the OpenAPI document are derived from them.
 */
import { z } from "zod";
import { limitsSchema } from "../../engine/destinations.ts";

export const destinationLimitsSchema = limitsSchema.describe(
  "as DESTINATIONS sets them; {} for a destination it does not list",
);

export const destinationStateSchema = z.strictObject({
  destination: z
    .string()
    .describe(
      "a DESTINATIONS key (host, *.domain or registry tool), or an unlisted host that was paused",
    ),
  limits: destinationLimitsSchema,
  inFlight: z.int().min(0).describe("calls holding a slot (a lease) now"),
  waiting: z.int().min(0).describe("calls waiting for a slot, first asked first served"),
  pausedUntil: z
    .string()
    .nullable()
    .describe("the end of the pause a 429 (or a 503 with Retry-After) set; null when not paused"),
});

export const destinationListSchema = z
  .array(destinationStateSchema)
  .describe("the listed destinations in DESTINATIONS order, then unlisted ones paused lately");
