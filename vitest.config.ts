/**
 * Two test projects, both run by `npm test` (`vitest run`):
 *  - workers: the unit and integration tests, inside workerd through the Cloudflare pool,
 *    with the loopback upstream of test/global-setup.ts. Its Worker is test/support/worker.ts:
 *    the real app, with a RunObject whose alarm only the tests fire and whose clock they move
 *    (test/support/test-run-object.ts), so workerd never races a test, and a RunIndex that
 *    fails or hangs when a test says so (test/support/test-run-index.ts);
 *  - e2e: plain Node tests (test/e2e) that boot the Worker, bundled once by wrangler
 *    (test/e2e/global-setup.ts), in Miniflare and talk to it over real HTTP, with real alarms.
 */
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_DESTINATIONS } from "./test/test-destinations.ts";
import { testRegistry } from "./test/tools-registry.ts";

export default defineConfig({
  test: {
    projects: [
      {
        extends: false,
        plugins: [
          cloudflareTest(({ inject }) => {
            const upstreamUrl = inject("upstreamUrl");
            return {
              main: "./test/support/worker.ts",
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                // A second run namespace whose objects see no WEBHOOK_SECRET (test/webhooks.test.ts).
                durableObjects: {
                  RUNS_WITHOUT_WEBHOOK_SECRET: {
                    className: "RunObjectWithoutWebhookSecret",
                    useSQLite: true,
                  },
                },
                bindings: {
                  UPSTREAM_URL: upstreamUrl,
                  TOOLS: JSON.stringify(testRegistry(upstreamUrl)),
                  DESTINATIONS: JSON.stringify(TEST_DESTINATIONS),
                  UPSTREAM_TOKEN: "test-secret-token-value",
                  // The Worker-wide webhook signing secret, for plans whose webhook has none (SPEC 5.7).
                  WEBHOOK_SECRET: "test-worker-webhook-secret",
                  // Tests create far more runs per minute than the production default allows.
                  RUNS_PER_MINUTE: "0",
                },
              },
            };
          }),
        ],
        test: {
          name: "workers",
          // One workerd for every file, rather than one started (about 1.5 s) for each: the
          // files share nothing but the upstream, which they already shared; each test makes
          // its own runs, keys and upstream paths (helpers.ts `unique`). One file at a time
          // (Vitest's default on 2 cores): two at a time took the suite from 334 to 202 s
          // alone, but two suites at once (four files) then stalled tests past their budgets.
          isolate: false,
          globalSetup: ["./test/global-setup.ts"],
          // Boots the Worker before a file's first test (once per workerd): see the file.
          setupFiles: ["./test/support/warm-up.ts"],
          include: ["src/**/*.test.ts", "durable-objects/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["test/e2e/**"],
        },
      },
      {
        extends: false,
        test: {
          name: "e2e",
          environment: "node",
          globalSetup: ["./test/e2e/global-setup.ts"],
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
