// `env` from "cloudflare:workers" in tests: the Worker's bindings (worker-configuration.d.ts,
// from `wrangler types`), its optional variables, and the test-only bindings of vitest.config.ts.
import type { ConfigVars } from "../src/env";
import type { TestRunIndex } from "./support/test-run-index";
import type { TestRunObject } from "./support/test-run-object";

declare global {
  namespace Cloudflare {
    interface Env extends ConfigVars {
      // The test Worker's classes (test/support/worker.ts).
      RUNS: DurableObjectNamespace<TestRunObject>;
      INDEX: DurableObjectNamespace<TestRunIndex>;
      UPSTREAM_URL: string;
      UPSTREAM_TOKEN: string;
    }
  }
}
export {};
