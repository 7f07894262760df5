/**
 * Registry tools (SPEC 4): the Worker's `TOOLS` variable names HTTP endpoints (or
 * service bindings) that plans call by name. Header values may use `${secrets.NAME}`;
 * they are substituted only on the outgoing request, never stored or echoed.
 */
import { z } from "zod";
import { sendHttp, type Fetcher } from "./http-client";
import type { Tool, ToolResult } from "./tool";

const entrySchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/ }).optional(),
    service: z.string().min(1).optional(),
    path: z.string().startsWith("/").default("/"),
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .default("GET"),
    headers: z.record(z.string(), z.string()).default({}),
    paramsAs: z.enum(["query", "body"]).optional(),
  })
  .refine((e) => (e.url === undefined) !== (e.service === undefined), {
    message: "a tool needs exactly one of url or service",
  });

export const registrySchema = z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), entrySchema);
export type RegistryEntry = z.output<typeof entrySchema>;

/** Parses `TOOLS`: a JSON object, or a string holding one. Throws with a readable message. */
export function parseRegistry(value: unknown): Record<string, RegistryEntry> {
  let raw = value ?? {};
  if (typeof raw === "string") {
    try {
      raw = raw.trim() === "" ? {} : JSON.parse(raw);
    } catch (err) {
      throw new Error(`TOOLS is not valid JSON: ${(err as Error).message}`);
    }
  }
  const parsed = registrySchema.safeParse(raw);
  if (!parsed.success) throw new Error(`TOOLS is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

const SECRET_REF = /\$\{secrets\.([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface RegistryDeps {
  fetcher: Fetcher;
  /** Fetcher of a service binding, or undefined when the Worker has none by that name. */
  service(name: string): Fetcher | undefined;
  secret(name: string): string | undefined;
  checkUrl(url: string): string | null;
}

export function registryTool(name: string, entry: RegistryEntry, deps: RegistryDeps): Tool {
  return {
    name,
    async invoke(params, call): Promise<ToolResult> {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(entry.headers)) {
        let missing: string | undefined;
        headers[key] = value.replace(SECRET_REF, (_, secret: string) => {
          const v = deps.secret(secret);
          if (v === undefined) missing = secret;
          return v ?? "";
        });
        if (missing) return { ok: false, category: "tool_not_found", message: `tool "${name}" needs secret ${missing}, which is not set` };
      }
      const asQuery = (entry.paramsAs ?? (entry.method === "GET" ? "query" : "body")) === "query";
      let url: string;
      let fetcher = deps.fetcher;
      if (entry.service !== undefined) {
        const service = deps.service(entry.service);
        if (!service) return { ok: false, category: "tool_not_found", message: `tool "${name}": no service binding ${entry.service}` };
        fetcher = service;
        url = new URL(entry.path, `https://${entry.service.toLowerCase()}.internal`).toString();
      } else {
        url = entry.url!;
      }
      return sendHttp(
        {
          url,
          method: entry.method,
          headers,
          ...(asQuery ? { query: params } : { body: params }),
        },
        call,
        fetcher,
        // A service binding is not the internet: its calls (and redirects) stay inside Cloudflare.
        entry.service !== undefined ? () => null : deps.checkUrl,
      );
    },
  };
}
