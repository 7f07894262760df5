/**
 * `GET /v1/destinations` (SPEC 10): every destination DESTINATIONS lists, and the unlisted ones
 * paused lately (the pause board knows them), each with what its Durable Object holds now.
 * Destinations are the Worker's, not a key's: every caller sees them all.
 */
import { Hono } from "hono";
import { BOARD_NAME } from "../../durable-objects/destinations/pause-board";
import { settings } from "../env";
import type { AppEnv } from "./types";
import { takesNoQuery } from "./validate-input";

export const destinationRoutes = new Hono<AppEnv>();

destinationRoutes.get("/", async (c) => {
  takesNoQuery(c); // a misspelt filter is a 400, not ignored
  const { destinations } = settings(c.env);
  const boards = c.env.PAUSE_BOARD;
  const paused = await boards.get(boards.idFromName(BOARD_NAME)).recent();
  const listed = destinations.listed.map(([key]) => key);
  const keys = [...listed, ...paused.filter((key) => destinations.limitsOf(key) === null)];
  const slots = c.env.DESTINATION_SLOTS;
  const states = await Promise.all(
    keys.map((key) => slots.get(slots.idFromName(key)).describe(key)),
  );
  const list = keys.map((destination, n) => {
    const { inFlight, waiting, pausedUntil } = states[n]!;
    return {
      destination,
      limits: destinations.limitsOf(destination) ?? {},
      inFlight,
      waiting,
      pausedUntil: pausedUntil === null ? null : new Date(pausedUntil).toISOString(),
    };
  });
  // An unlisted destination is shown while its pause or the calls it let through last.
  return c.json(
    list.filter(
      (d, n) => n < listed.length || d.pausedUntil !== null || d.inFlight + d.waiting > 0,
    ),
  );
});
