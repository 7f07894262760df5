// Types of `env` and `exports` from "cloudflare:workers" inside tests.
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      // Test-only bindings (vitest.config.ts).
      UPSTREAM_URL: string;
      UPSTREAM_TOKEN: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "RunObject";
    }
  }
}
