/**
 * `POST /v1/callbacks/:token`: completes a `callback` step. No API key: the single-use,
 * unguessable token is the credential. An unknown token is a 404, a used or expired one
 * a 409, and neither changes anything.
 */
import { Hono } from "hono";
import { runIdOfToken } from "../ids";
import { ConflictError, NotFoundError } from "../errors";
import { callbackBodySchema } from "./schemas";
import type { AppEnv } from "./types";
import { runObject } from "./run-stub";
import { readControlBody, takesNoQuery } from "./validate-input";

export const callbackRoutes = new Hono<AppEnv>();

callbackRoutes.post("/:token", async (c) => {
  takesNoQuery(c);
  const token = c.req.param("token");
  const runId = runIdOfToken(token);
  if (!runId) throw new NotFoundError("unknown callback token");
  const answer = await readControlBody(c, callbackBodySchema);
  const stub = runObject(c.env, runId);
  const outcome = await stub.answerCallback(token, answer);
  if (outcome === "not_found") throw new NotFoundError("unknown callback token");
  if (outcome === "conflict")
    throw new ConflictError("this callback token was already used or has expired");
  return c.json({ ok: true });
});
