/**
 * The Worker's hand-over to the console's assets (src/api/console-assets.ts), against an
 * ASSETS binding that answers as wrangler.toml's `not_found_handling = "none"` does: its
 * files, else 404. (The real assets are in test/e2e/console.test.ts.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { namesFile } from "../src/api/console-assets";

const FILES: Record<string, string> = {
  "/": "<div id=app>",
  "/assets/main.js": "console.log(1)",
};
const assets = {
  fetch: async (input: RequestInfo | URL) => {
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    const body = FILES[path];
    return body === undefined ? new Response(null, { status: 404 }) : new Response(body);
  },
} as unknown as Fetcher;
const get = (path: string) =>
  createApp().fetch(new Request(`http://edgestep.test${path}`), { ...env, ASSETS: assets });

describe("the console's assets", () => {
  it("answers a page path with index.html and a missing file with 404", async () => {
    for (const page of ["/", "/runs/run_x", "/playground"]) {
      const res = await get(page);
      expect([page, res.status, await res.text()]).toEqual([page, 200, "<div id=app>"]);
    }
    expect(await (await get("/assets/main.js")).text()).toBe("console.log(1)");
    for (const missing of ["/assets/nope.js", "/favicon-missing.png", "/a/b.css.map"])
      expect([missing, (await get(missing)).status]).toEqual([missing, 404]);
  });

  it("takes a file extension from the path's last segment only", () => {
    expect(namesFile("/runs/run_0a")).toBe(false);
    expect(namesFile("/v1.2/runs")).toBe(false);
    expect(namesFile("/x/nope.js")).toBe(true);
    expect(namesFile("/.env")).toBe(true);
  });
});
