/**
 * Calls into Durable Objects outlive the request that made them. A client that goes away (a
 * closed event stream, an aborted long poll or read) cancels its request, and with it the calls
 * it has open into objects; workerd then also drops what an object started while that call was
 * its current request: a run's next `fetch`, its timeout, the answer it was about to record.
 * Measured under `wrangler dev`: clients that reconnected their event streams every few events
 * left most of their runs in `running` for good. So each call is kept to its end
 * (`waitUntil`); no one reads an answer its client left.
 */
import type { MiddlewareHandler } from "hono";
import { withBindings, type Env } from "../env";
import type { AppEnv } from "./types";

/** What keeps work going after its request: the execution context's `waitUntil`. */
interface Keeper {
  waitUntil(work: Promise<unknown>): void;
}

/** Middleware: the request's Durable Object bindings keep their calls to their end. */
export const keepCalls: MiddlewareHandler<AppEnv> = async (c, next) => {
  let ctx: Keeper | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    // (a test calling app.fetch without an execution context: nothing outlives its request)
  }
  if (ctx) c.env = keptCalls(c.env, ctx);
  await next();
};

/** `env` whose Durable Object stubs' calls are kept to their end by `ctx`. */
export function keptCalls(env: Env, ctx: Keeper): Env {
  return withBindings(env, {
    RUNS: keptNamespace(env.RUNS, ctx),
    LIMITS: keptNamespace(env.LIMITS, ctx),
    INDEX: keptNamespace(env.INDEX, ctx),
    DESTINATION_SLOTS: keptNamespace(env.DESTINATION_SLOTS, ctx),
    PAUSE_BOARD: keptNamespace(env.PAUSE_BOARD, ctx),
  });
}

function keptNamespace<N extends DurableObjectNamespace<any>>(namespace: N, ctx: Keeper): N {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "jurisdiction")
        return (...args: unknown[]) => keptNamespace(Reflect.apply(value, target, args), ctx);
      if (property !== "get" && property !== "getByName") return value.bind(target);
      return (...args: unknown[]) => keptStub(Reflect.apply(value, target, args), ctx);
    },
  });
}

/** Every method call through the stub is kept (a property read, `await stub.x`, is not supported). */
function keptStub<S extends object>(stub: S, ctx: Keeper): S {
  return new Proxy(stub, {
    get(target, property) {
      const method = Reflect.get(target, property, target);
      if (typeof method !== "function") return method;
      return (...args: unknown[]) => {
        // Reflect.apply: an RPC method would take `.apply` for a remote method of that name.
        const call = Reflect.apply(method, target, args);
        if (typeof call?.then === "function")
          ctx.waitUntil(Promise.resolve(call).then(ignore, ignore));
        return call;
      };
    },
  });
}

function ignore(): void {}
