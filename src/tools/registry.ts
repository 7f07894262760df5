/**
 * Registry tools (SPEC 4): the Worker's `TOOLS` variable names HTTP endpoints (or
 * service bindings) that plans call by name. Header values may use `${secrets.NAME}`;
 * they are substituted only on the outgoing request, never stored or echoed. An upstream may
 * echo them back (its request headers in a JSON answer, "bad token ..." in a 401): the values
 * this call sent are redacted from its ToolResult before the run stores anything.
 */
import { z } from "zod";
import { jsonVariable } from "../engine/json-variable.ts";
import { REDACTED } from "../engine/plan-view";
import { headersSchema } from "./http";
import { bodiless, HEADER_NAME, sendHttp, type Fetcher } from "./http-client";
import { BUILT_IN_TOOL_NAMES, type Tool, type ToolResult } from "./tool";

const entrySchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/ }).optional(),
    service: z.string().min(1).optional(),
    path: z.string().startsWith("/").default("/"),
    method: z
      .string()
      .regex(HEADER_NAME, "a method is an HTTP token such as GET or POST")
      .transform((m) => m.toUpperCase())
      .default("GET"),
    headers: headersSchema.default({}),
    paramsAs: z.enum(["query", "body"]).optional(),
  })
  .refine((e) => (e.url === undefined) !== (e.service === undefined), {
    message: "a tool needs exactly one of url or service",
  })
  .refine((e) => !(e.paramsAs === "body" && bodiless(e.method)), {
    message: 'a GET or HEAD tool has no body to send its params in: paramsAs must be "query"',
    path: ["paramsAs"],
  });

export const registrySchema = z
  .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), entrySchema)
  // A plan naming a built-in calls the built-in: such an entry could never be used.
  .superRefine((tools, ctx) => {
    for (const name of Object.keys(tools).filter((n) => BUILT_IN_TOOL_NAMES.has(n)))
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `"${name}" is a built-in tool: give the entry another name`,
      });
  });
export type RegistryEntry = z.output<typeof entrySchema>;

/** Parses `TOOLS`: a JSON object, or a string holding one. Throws with a readable message. */
export function parseRegistry(value: unknown): Record<string, RegistryEntry> {
  const parsed = registrySchema.safeParse(jsonVariable(value, "TOOLS"));
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
    // Checked against ALLOWED_HOSTS when a plan is submitted; a service binding is exempt.
    ...(entry.url !== undefined && { fixedUrl: entry.url }),
    async invoke(params, call): Promise<ToolResult> {
      const filled = fillHeaders(name, entry, deps);
      if ("ok" in filled) return filled;
      const target = targetOf(name, entry, deps);
      if ("ok" in target) return target;
      const redact = redactor(filled.secrets);
      const asQuery = (entry.paramsAs ?? (entry.method === "GET" ? "query" : "body")) === "query";
      try {
        const result = await sendHttp(
          {
            url: target.url,
            method: entry.method,
            headers: filled.headers,
            ...(asQuery ? { query: params } : { body: params }),
            // A secret goes only to the origin it was configured for, whatever the header's name.
            dropOnCrossOrigin: filled.secretHeaders,
            redactBody: redact,
          },
          call,
          target.fetcher,
          // A service binding is not the internet: its calls (and redirects) stay inside Cloudflare.
          entry.service !== undefined ? () => null : deps.checkUrl,
        );
        return redactResult(result, redact);
      } catch (err) {
        // Caught here, not by the caller, so that the message is redacted too.
        const message = redact(`tool "${name}" failed: ${String(err)}`);
        return { ok: false, category: "network", message };
      }
    },
  };
}

/** The entry's headers with `${secrets.NAME}` filled in, the secrets used, and the headers holding one. */
function fillHeaders(
  name: string,
  entry: RegistryEntry,
  deps: RegistryDeps,
): { headers: Record<string, string>; secrets: string[]; secretHeaders: string[] } | ToolFailure {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  const secretHeaders: string[] = [];
  for (const [key, value] of Object.entries(entry.headers)) {
    let missing: string | undefined;
    let holdsSecret = false;
    headers[key] = value.replace(SECRET_REF, (_, secret: string) => {
      const v = deps.secret(secret);
      if (v === undefined) missing = secret;
      else secrets.push(v);
      holdsSecret = true;
      return v ?? "";
    });
    if (missing) {
      const message = `tool "${name}" needs secret ${missing}, which is not set`;
      return { ok: false, category: "tool_not_found", message };
    }
    if (holdsSecret) secretHeaders.push(key);
  }
  return { headers, secrets, secretHeaders };
}

type ToolFailure = Extract<ToolResult, { ok: false }>;

/** Where the entry sends its calls: its URL, or its service binding. */
function targetOf(
  name: string,
  entry: RegistryEntry,
  deps: RegistryDeps,
): { url: string; fetcher: Fetcher } | ToolFailure {
  if (entry.service === undefined) return { url: entry.url!, fetcher: deps.fetcher };
  const service = deps.service(entry.service);
  if (!service) {
    const message = `tool "${name}": no service binding ${entry.service}`;
    return { ok: false, category: "tool_not_found", message };
  }
  const url = new URL(entry.path, `https://${entry.service.toLowerCase()}.internal`).toString();
  return { url, fetcher: service };
}

/**
 * Replaces every occurrence of the values with "[redacted]": as sent, and JSON-escaped (as a
 * raw error body quotes a value holding `"` or `\`). Longest first, in one pass, so a secret
 * containing another is replaced whole.
 */
export function redactor(values: string[]): (text: string) => string {
  const forms = new Set(
    values.filter((v) => v !== "").flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]),
  );
  if (forms.size === 0) return (text) => text;
  const pattern = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("|"),
    "g",
  );
  return (text) => text.replace(pattern, REDACTED);
}

/** A ToolResult with `data` redacted deeply (strings, object keys, numbers) and any error message. */
export function redactResult(result: ToolResult, redact: (text: string) => string): ToolResult {
  if ("suspend" in result) return result;
  if (!result.ok) return { ...result, message: redact(result.message) };
  return { ...result, data: redactValue(result.data, redact) };
}

function redactValue(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  // A secret of digits echoed as a JSON number: stored as the redacted string.
  if (typeof value === "number") {
    const text = String(value);
    const redacted = redact(text);
    return redacted === text ? value : redacted;
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redact(k), redactValue(v, redact)]),
    );
  }
  return value;
}
