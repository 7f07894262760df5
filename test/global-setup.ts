/** Starts the loopback upstream once for the whole test run and provides its URL. */
import type { TestProject } from "vitest/node";
import { startUpstream } from "./upstream/server.ts";

import "./provided.d.ts";

export default async function setup(project: TestProject) {
  const upstream = await startUpstream();
  project.provide("upstreamUrl", upstream.url);
  return () => upstream.close();
}
