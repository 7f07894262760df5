/**
 * Finding runs (SPEC 8.2): `GET /v1/runs` pages the caller's runs, newest first, with the
 * filters of the query; `GET /v1/stats` counts them by status. Both ask the caller's own
 * RunIndex (one per API key), never the runs themselves.
 */
import type { Context } from "hono";
import { runIndexOf } from "../../durable-objects/run-index/run-index";
import { decodeCursor } from "../engine/listing";
import { InvalidPlanError } from "../errors";
import { listRunsQuerySchema } from "./schemas/listing";
import type { AppEnv } from "./types";
import { parseInput } from "./validate-input";

export async function listRuns(c: Context<AppEnv>) {
  // `tag` may repeat: every one must match.
  const raw = { ...c.req.query(), tag: c.req.queries("tag") };
  const query = parseInput(listRunsQuerySchema, raw, "query");
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (after === null) {
    const message = "not a cursor this API gave out: pass the `next` of the previous page";
    throw new InvalidPlanError([{ path: "query.cursor", message }], "invalid_request");
  }
  const page = await runIndexOf(c.env, c.get("owner")).list({
    ...(query.status && { statuses: query.status }),
    ...(query.name !== undefined && { name: query.name }),
    ...(query.tag && { tags: query.tag }),
    ...(query.createdAfter !== undefined && { createdAfter: query.createdAfter }),
    ...(query.createdBefore !== undefined && { createdBefore: query.createdBefore }),
    ...(after && { after }),
    limit: query.limit,
  });
  return c.json(page);
}

export async function runStats(c: Context<AppEnv>) {
  return c.json(await runIndexOf(c.env, c.get("owner")).stats());
}
