/**
 * Bundles the Worker once for every e2e file (`wrangler deploy --dry-run`, the console's
 * assets included): each file boots its own Miniflare on this read-only bundle rather than
 * building its own, which took about 5 s a file.
 */
import { rm } from "node:fs/promises";
import type { TestProject } from "vitest/node";
import { buildBundle } from "./worker.ts";

import "../provided.d.ts";

export default async function setup(project: TestProject) {
  const outdir = await buildBundle();
  project.provide("e2eBundleDir", outdir);
  return () => rm(outdir, { recursive: true, force: true });
}
