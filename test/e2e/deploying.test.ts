/**
 * Deploying (README, Deploying): wrangler.toml's production environment bundles as
 * `wrangler deploy --env production` would, and the Worker it configures refuses /v1 while
 * API_KEYS is unset (test/auth.test.ts covers the rest: keys set, the opt-out);
 * `npm start -- --port <n>` serves on that port.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { bootWorker } from "./worker.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** A port the OS says is free now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe("the production environment", () => {
  it("bundles as wrangler deploy --dry-run --env production, and the Worker refuses /v1 without API_KEYS", async () => {
    // bootWorker builds with `wrangler deploy --dry-run --env production` and configures
    // Miniflare from that environment (its vars: REQUIRE_API_KEYS, no demo TOOLS).
    const production = await bootWorker("http://127.0.0.1:9", {}, "production");
    try {
      const res = await fetch(`${production.url}/v1/plans/validate`, {
        method: "POST",
        body: JSON.stringify({ steps: [{ tool: "pass" }] }),
      });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("auth_not_configured");
      expect(body.error.message).toMatch(/wrangler secret put API_KEYS --env production/);
      expect((await fetch(`${production.url}/healthz`)).status).toBe(200);
    } finally {
      await production.stop();
    }
  });
});

describe("npm start", () => {
  it("serves on the port given with npm start -- --port <n>", async () => {
    const [port, inspector] = [await freePort(), await freePort()];
    const child = spawn(
      "npm",
      ["start", "--", "--port", String(port), "--inspector-port", String(inspector)],
      {
        cwd: ROOT,
        detached: true,
        stdio: "ignore",
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
      },
    );
    try {
      const deadline = Date.now() + 60_000;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.status,
          () => 0,
        );
      }
      expect(status).toBe(200);
    } finally {
      // npm, wrangler and workerd: the whole process group, forcibly if it lingers.
      const exited = once(child, "exit");
      process.kill(-child.pid!, "SIGTERM");
      const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
  }, 90_000);
});
