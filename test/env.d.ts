// Types of `env` and `exports` from "cloudflare:workers" inside tests.
import type { Env as WorkerEnv } from "../src/env";
import type { RunObjectWithoutWebhookSecret, TestRunObject } from "./support/test-run-object";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      // The test Worker's RunObject is TestRunObject (test/support/worker.ts).
      RUNS: DurableObjectNamespace<TestRunObject>;
      // Test-only bindings (vitest.config.ts).
      RUNS_WITHOUT_WEBHOOK_SECRET: DurableObjectNamespace<RunObjectWithoutWebhookSecret>;
      UPSTREAM_URL: string;
      UPSTREAM_TOKEN: string;
    }
    interface GlobalProps {
      mainModule: typeof import("./support/worker");
      durableNamespaces: "RunObject" | "RunObjectWithoutWebhookSecret";
    }
  }
}
