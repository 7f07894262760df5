/** The Hono API (SPEC 6). Errors are mapped to HTTP here, once. */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { settings, type Env } from "../env";
import { EdgestepError, InvalidPlanError, unavailableObject } from "../errors";
import { allowedMethods } from "./allowed-methods";
import { authenticate } from "./auth";
import { callbackRoutes } from "./callbacks";
import { consoleAsset } from "./console-assets";
import { runStats } from "./listing";
import { destinationRoutes } from "./destinations";
import { keepCalls } from "./kept-calls";
import { cachedOpenApiDocument } from "./openapi/document";
import { planRoutes } from "./plans";
import { runRoutes } from "./runs";
import type { AppEnv } from "./types";

export function createApp() {
  const app = new Hono<AppEnv>();
  app.use("*", keepCalls);

  // A callback's token is its credential (SPEC 6): mounted before authentication applies.
  app.route("/v1/callbacks", callbackRoutes);
  app.use("/v1/*", authenticate);

  app.get("/healthz", (c) => c.json({ ok: true as const }));
  app.get("/openapi.json", (c) =>
    c.json(cachedOpenApiDocument(settings(c.env).maxStepsPerPlan, new URL(c.req.url).origin)),
  );
  app.route("/v1/plans", planRoutes);
  app.route("/v1/runs", runRoutes);
  app.get("/v1/stats", runStats);
  app.route("/v1/destinations", destinationRoutes);

  // Every request reaches the Worker first (wrangler.toml): what is not the API's is the console's.
  let methodsOf: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    if (c.env.ASSETS && !isApiPath(path)) return consoleAsset(c.env.ASSETS, c.req.raw);
    methodsOf ??= allowedMethods(app.routes);
    const allowed = methodsOf(path);
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      const message = `${c.req.method} is not allowed on ${path}: ${allowed.join(", ")}`;
      return c.json({ error: { code: "method_not_allowed", message } }, 405);
    }
    return c.json(
      { error: { code: "not_found", message: `no route for ${c.req.method} ${path}` } },
      404,
    );
  });

  app.onError((thrown, c) => {
    const err = thrown instanceof EdgestepError ? thrown : (unavailableObject(thrown) ?? thrown);
    if (err instanceof EdgestepError) {
      // The operator's to fix (a bad variable): in the Worker's log as well as in the answer.
      if (err.status >= 500) console.error(`edgestep: ${err.message}`);
      if (err.retryAfterSeconds !== undefined)
        c.header("Retry-After", String(err.retryAfterSeconds));
      const body = {
        error: {
          code: err.code,
          message: err.message,
          ...(err instanceof InvalidPlanError && { issues: err.issues }),
        },
      };
      return c.json(body, err.status);
    }
    if (err instanceof HTTPException) {
      if (err.res) return err.getResponse();
      const status = err.status;
      return c.json(
        {
          error: {
            code: status === 413 ? "payload_too_large" : "bad_request",
            message: err.message,
          },
        },
        status,
      );
    }
    console.error("unhandled error", err);
    return c.json({ error: { code: "internal", message: "internal error" } }, 500);
  });

  return app;
}

/** The API's own paths: an unknown one is a JSON 404, never the console's page. */
function isApiPath(path: string): boolean {
  const p = path.replace(/\/+$/, ""); // `/healthz/` is the API's 404, not the console's page
  return p === "/v1" || p.startsWith("/v1/") || p === "/healthz" || p === "/openapi.json";
}

export type { Env };
