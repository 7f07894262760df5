import type { Env } from "../env";

/** Hono's environment: bindings, plus the caller's identity set by the auth middleware. */
export type AppEnv = { Bindings: Env; Variables: { owner: string } };
