/**
 * Authentication (SPEC 6): with `API_KEYS` set, every `/v1` route needs
 * `Authorization: Bearer <key>` (hono's bearer-auth: constant-time compare). A run
 * belongs to the key that created it: the owner is a hash of the key, so keys are
 * never stored. Without `API_KEYS` auth is off and one warning is logged.
 */
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import type { AppEnv } from "./types";

export const PUBLIC_OWNER = "public";

const error = (code: string, message: string) => ({ error: { code, message } });

let warned = false;

export function parseApiKeys(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
}

async function ownerOf(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `key_${Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const keys = parseApiKeys(c.env.API_KEYS);
  if (keys.length === 0) {
    if (!warned) {
      warned = true;
      console.warn("edgestep: API_KEYS is not set, authentication is OFF (fine for local development only)");
    }
    c.set("owner", PUBLIC_OWNER);
    return next();
  }
  const check = bearerAuth<AppEnv>({
    token: keys,
    noAuthenticationHeader: { message: error("unauthorized", "missing Authorization: Bearer <key>") },
    invalidAuthenticationHeader: { message: error("unauthorized", "malformed Authorization header: use Bearer <key>") },
    invalidToken: { message: error("unauthorized", "unknown API key") },
  });
  return check(c, async () => {
    c.set("owner", await ownerOf(c.req.header("authorization")!.replace(/^Bearer\s+/i, "").trim()));
    await next();
  });
};
