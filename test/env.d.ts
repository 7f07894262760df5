// `env` from "cloudflare:workers" in tests: the Worker's bindings (worker-configuration.d.ts,
// from `wrangler types`), its optional variables, and the test-only bindings of vitest.config.ts.
// The test Worker's RunObject is TestRunObject (test/support/worker.ts): test/helpers.ts
// reads `RUNS` with that type.
import type { ConfigVars } from "../src/env";
import type { RunObjectWithoutWebhookSecret } from "./support/test-run-object";

declare global {
  namespace Cloudflare {
    interface Env extends ConfigVars {
      RUNS_WITHOUT_WEBHOOK_SECRET: DurableObjectNamespace<RunObjectWithoutWebhookSecret>;
      UPSTREAM_URL: string;
      UPSTREAM_TOKEN: string;
    }
  }
}
export {};
