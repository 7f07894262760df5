import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { testRegistry } from "./test/tools-registry.ts";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => {
      const upstreamUrl = inject("upstreamUrl");
      return {
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            UPSTREAM_URL: upstreamUrl,
            TOOLS: JSON.stringify(testRegistry(upstreamUrl)),
            UPSTREAM_TOKEN: "test-secret-token-value",
          },
        },
      };
    }),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    include: ["src/**/*.test.ts", "durable-objects/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["test/e2e/**"],
  },
});
