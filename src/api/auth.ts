/**
 * Authentication (SPEC 6): with `API_KEYS` set, every `/v1` route needs
 * `Authorization: Bearer <key>`, else a JSON 401, whatever is wrong with the header. A run
 * belongs to the key that created it: the owner is a hash of the key, so keys are never
 * stored. Without `API_KEYS` auth is off and one warning is logged, on the first request
 * (a Worker has no start hook), unless the deployment says it requires keys
 * (`REQUIRE_API_KEYS`, set by wrangler.toml's production environment): then every `/v1`
 * request is refused with a 503 that says what to set, until `API_KEYS` is set or
 * `ALLOW_UNAUTHENTICATED=true` opts out.
 *
 * Not hono's bearer-auth: it answers 400 to a token outside RFC 6750's charset, which both
 * breaks SPEC 6's 401 and makes a configured key such as `k!y@1` unusable.
 */
import type { Context, MiddlewareHandler } from "hono";
import { boolVar, invalidConfiguration } from "../env";
import type { AppEnv } from "./types";

export const PUBLIC_OWNER = "public";

let warned = false;

/** The keys of `API_KEYS`; a value that is set but names no key (`,`) is a deployment error, not auth off. */
export function parseApiKeys(value: string | undefined): string[] {
  const keys = (value ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  if (keys.length === 0 && (value ?? "").trim() !== "")
    throw invalidConfiguration("API_KEYS is set but holds no key (comma-separated keys)");
  return keys;
}

const encoder = new TextEncoder();
const sha256 = async (s: string) => crypto.subtle.digest("SHA-256", encoder.encode(s));

/** The owner of the runs `key` creates: a hash, so keys are never stored. */
export async function ownerOf(key: string): Promise<string> {
  const digest = new Uint8Array(await sha256(key));
  return `key_${Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The configured key equal to `token`, or undefined. Constant-time: both sides are hashed
 * to 32 bytes (no length leak) and compared with `timingSafeEqual`, against every key
 * without stopping at a match.
 */
async function matchingKey(token: string, keys: string[]): Promise<string | undefined> {
  const presented = await sha256(token);
  let match: string | undefined;
  for (const key of keys) {
    if (crypto.subtle.timingSafeEqual(presented, await sha256(key)) && match === undefined)
      match = key;
  }
  return match;
}

function unauthorized(c: Context<AppEnv>, message: string, challenge: string) {
  c.header("WWW-Authenticate", challenge);
  return c.json({ error: { code: "unauthorized", message } }, 401);
}

const NOT_CONFIGURED =
  "API_KEYS is not set, and this deployment requires it (REQUIRE_API_KEYS=true, as in wrangler.toml's [env.production]): " +
  "every /v1 request is refused. Set keys with `wrangler secret put API_KEYS --env production`, " +
  "or set ALLOW_UNAUTHENTICATED=true to serve without authentication.";

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const keys = parseApiKeys(c.env.API_KEYS);
  if (keys.length === 0) {
    const required = boolVar(c.env.REQUIRE_API_KEYS, "REQUIRE_API_KEYS");
    if (required && !boolVar(c.env.ALLOW_UNAUTHENTICATED, "ALLOW_UNAUTHENTICATED")) {
      return c.json({ error: { code: "auth_not_configured", message: NOT_CONFIGURED } }, 503);
    }
    if (!warned) {
      warned = true;
      console.warn(
        "edgestep: API_KEYS is not set, authentication is OFF (fine for local development only)",
      );
    }
    c.set("owner", PUBLIC_OWNER);
    return next();
  }
  const header = c.req.header("authorization");
  if (header === undefined || header.trim() === "") {
    return unauthorized(c, "missing Authorization: Bearer <key>", 'Bearer realm="edgestep"');
  }
  // Any characters after "Bearer ": a key is whatever API_KEYS holds between its commas.
  const bearer = /^Bearer[ \t]+(\S.*)$/i.exec(header.trim());
  if (!bearer) {
    return unauthorized(
      c,
      "malformed Authorization header: use Bearer <key>",
      'Bearer error="invalid_request"',
    );
  }
  const key = await matchingKey(bearer[1]!.trim(), keys);
  if (key === undefined) return unauthorized(c, "unknown API key", 'Bearer error="invalid_token"');
  c.set("owner", await ownerOf(key));
  await next();
};
