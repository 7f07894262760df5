// `env` from "cloudflare:workers" in tests: the Worker's bindings (worker-configuration.d.ts,
// from `wrangler types`), its optional variables, and the test-only bindings of vitest.config.ts.
import type { ConfigVars } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends ConfigVars {
      UPSTREAM_URL: string;
      UPSTREAM_TOKEN: string;
    }
  }
}
export {};
