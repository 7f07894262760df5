/** The tool set of a Worker: built-ins plus the `TOOLS` registry. */
import { checkUrl, type AllowedHosts } from "../engine/egress";
import type { ToolSpec } from "../engine/validate";
import type { Fetcher } from "./http-client";
import { httpTool } from "./http";
import { passTool } from "./pass";
import { waitTool } from "./wait";
import { approvalTool } from "./approval";
import { callbackTool } from "./callback";
import { registryTool, type RegistryEntry } from "./registry";
import type { Tool } from "./tool";

export interface ToolEnvironment {
  registry: Record<string, RegistryEntry>;
  allowedHosts: AllowedHosts;
  fetcher: Fetcher;
  service(name: string): Fetcher | undefined;
  secret(name: string): string | undefined;
}

export class ToolSet {
  private readonly tools = new Map<string, Tool>();

  constructor(env: ToolEnvironment) {
    const check = (url: string) => checkUrl(url, env.allowedHosts)?.message ?? null;
    for (const tool of [
      httpTool(env.fetcher, check),
      passTool,
      waitTool,
      approvalTool,
      callbackTool(env.fetcher, check),
    ])
      this.tools.set(tool.name, tool);
    for (const [name, entry] of Object.entries(env.registry)) {
      // A built-in name always means the built-in.
      if (!this.tools.has(name)) {
        this.tools.set(name, registryTool(name, entry, { ...env, checkUrl: check }));
      }
    }
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  spec(name: string): ToolSpec | undefined {
    return this.tools.get(name);
  }
}
