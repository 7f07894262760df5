/** The tool set of a Worker: built-ins plus the `TOOLS` registry. */
import type { CallTarget } from "../engine/destinations";
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
  /** The registry's tools (never a built-in's name: `TOOLS` refuses one). */
  readonly registryNames = new Set<string>();

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
      this.tools.set(name, registryTool(name, entry, { ...env, checkUrl: check }));
      this.registryNames.add(name);
    }
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  spec(name: string): ToolSpec | undefined {
    return this.tools.get(name);
  }

  /**
   * What a call of tool `name` with (resolved) `params` is sent to, for flow control (SPEC 10):
   * a registry tool's name and URL, an `http` or `callback` URL; null for tools that call
   * nothing (`pass`, `wait`, `approval`).
   */
  target(name: string, params: Record<string, unknown>): CallTarget | null {
    const tool = this.tools.get(name);
    if (!tool) return null;
    if (this.registryNames.has(name))
      return { tool: name, registry: true, url: tool.fixedUrl ?? null };
    const param = tool.urlParams?.[0];
    if (param === undefined) return null;
    const url = params[param];
    return { tool: name, registry: false, url: typeof url === "string" ? url : null };
  }
}
