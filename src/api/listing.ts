/**
 * Finding runs (SPEC 8.2): `GET /v1/runs` pages the caller's runs, newest first, with the
 * filters of the query; `GET /v1/stats` counts them by status. Both ask the caller's own
 * RunIndex (one per API key), never the runs themselves.
 */
import type { Context } from "hono";
import { runIndexOf } from "../../durable-objects/run-index/run-index";
import { decodeCursor } from "../engine/listing";
import { InvalidPlanError, UnavailableError } from "../errors";
import { listRunsQuerySchema, statsQuerySchema } from "./schemas/listing";
import type { AppEnv } from "./types";
import { parseQuery } from "./validate-input";

export async function listRuns(c: Context<AppEnv>) {
  // `tag` may repeat: every one must match.
  const query = parseQuery(c, listRunsQuerySchema, ["tag"]);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (after === null) {
    const message = "not a cursor this API gave out: pass the `next` of the previous page";
    throw new InvalidPlanError([{ path: "query.cursor", message }], "invalid_request");
  }
  const index = runIndexOf(c.env, c.get("owner"));
  const page = await fromIndex(() =>
    index.list({
      ...(query.status && { statuses: query.status }),
      ...(query.name !== undefined && { name: query.name }),
      ...(query.tag && { tags: query.tag }),
      ...(query.createdAfter !== undefined && { createdAfter: query.createdAfter }),
      ...(query.createdBefore !== undefined && { createdBefore: query.createdBefore }),
      ...(after && { after }),
      limit: query.limit,
    }),
  );
  return c.json(page);
}

export async function runStats(c: Context<AppEnv>) {
  parseQuery(c, statsQuerySchema);
  const index = runIndexOf(c.env, c.get("owner"));
  return c.json(await fromIndex(() => index.stats()));
}

/** A read of the caller's index; one that fails is a 503 to retry (the runs are unharmed). */
async function fromIndex<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    console.warn("edgestep: a run index could not be read", err);
    throw new UnavailableError("the run listing cannot be read right now: retry shortly", {
      cause: err,
    });
  }
}
