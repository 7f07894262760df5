/**
 * Destinations (SPEC 10): what a tool call is sent to, and the limits `DESTINATIONS` sets on
 * it. A key of `DESTINATIONS` is a registry tool's name or a host (`api.example.com`, or
 * `*.example.com` for every host under it, all together); a call's destination is the most
 * specific key that names it, else its host (unlisted: no limits, but it can be paused).
 * Pure: parsed once per Worker (src/env.ts), looked up for each call.
 */
import { z } from "zod";
import { hostOf, hostPattern } from "./host-pattern.ts";
import { jsonVariable } from "./json-variable.ts";
import type { AttemptResult } from "./verdict.ts";

export const limitsSchema = z.strictObject({
  concurrency: z.int().min(1).max(100_000).optional().describe("calls in flight at once"),
  ratePerSecond: z
    .number()
    .positive()
    .max(100_000)
    .optional()
    .describe("calls started per second, on average"),
  burst: z
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("calls that may start at once after a quiet spell (with ratePerSecond; default 1)"),
});
export type Limits = z.output<typeof limitsSchema>;

export interface Destination {
  /** The `DESTINATIONS` key that names it, else the host (or the service tool's name) it calls. */
  key: string;
  /** Its limits; null when unlisted (only a pause holds its calls back). */
  limits: Limits | null;
}

/** What a call is sent to: the tool's name (registry tools), and the URL it calls (null for a service binding). */
export interface CallTarget {
  tool: string;
  registry: boolean;
  url: string | null;
}

export class DestinationTable {
  private readonly tools = new Map<string, Limits>();
  private readonly hosts = new Map<string, Limits>();
  /** `*.example.com` keys as [".example.com", limits], longest (most specific) first. */
  private readonly wildcards: [string, Limits][] = [];
  /** Every key with its limits, in the order DESTINATIONS lists them. */
  readonly listed: readonly (readonly [string, Limits])[];

  constructor(entries: readonly (readonly [string, Limits])[], toolNames: ReadonlySet<string>) {
    this.listed = entries;
    for (const [key, limits] of entries) {
      if (toolNames.has(key)) this.tools.set(key, limits);
      else if (key.startsWith("*.")) this.wildcards.push([key.slice(1), limits]);
      else this.hosts.set(key, limits);
    }
    this.wildcards.sort((a, b) => b[0].length - a[0].length);
  }

  get empty(): boolean {
    return this.listed.length === 0;
  }

  limitsOf(key: string): Limits | null {
    return this.listed.find(([k]) => k === key)?.[1] ?? null;
  }

  /** The destination of a call, or null when it names none (an unparsable URL: the tool fails it). */
  resolve(target: CallTarget): Destination | null {
    if (target.registry) {
      const limits = this.tools.get(target.tool);
      if (limits) return { key: target.tool, limits };
      if (target.url === null) return { key: target.tool, limits: null };
    }
    const host = hostOf(target.url);
    if (host === null) return null;
    const exact = this.hosts.get(host);
    if (exact) return { key: host, limits: exact };
    for (const [suffix, limits] of this.wildcards) {
      if (host.endsWith(suffix) && host.length > suffix.length)
        return { key: `*${suffix}`, limits };
    }
    return { key: host, limits: null };
  }
}

/** Whether a destination's calls wait for a slot: it limits concurrency or rate. */
export function limited(limits: Limits | null): boolean {
  return (
    limits !== null && (limits.concurrency !== undefined || limits.ratePerSecond !== undefined)
  );
}

/**
 * Parses `DESTINATIONS`: a JSON object, or a string holding one, keyed by registry tool names
 * (`toolNames`) and hosts. Throws with a readable message (a deployment error).
 */
export function parseDestinations(
  value: unknown,
  toolNames: ReadonlySet<string>,
): DestinationTable {
  const parsed = z.record(z.string(), limitsSchema).safeParse(jsonVariable(value, "DESTINATIONS"));
  if (!parsed.success) throw new Error(`DESTINATIONS is invalid: ${z.prettifyError(parsed.error)}`);
  const entries: [string, Limits][] = [];
  for (const [name, limits] of Object.entries(parsed.data)) {
    // A host with `_` is more likely a misspelt tool name (such hosts are rare outside DNS records).
    const key = toolNames.has(name) ? name : name.includes("_") ? null : hostPattern(name);
    if (key === null)
      throw new Error(
        `DESTINATIONS: "${name}" is neither a tool of TOOLS nor a host (api.example.com, *.example.com)`,
      );
    if (entries.some(([k]) => k === key)) throw new Error(`DESTINATIONS names "${key}" twice`);
    entries.push([key, limits]);
  }
  return new DestinationTable(entries, toolNames);
}

/**
 * The destination a call to `from` that a redirect led to `url` has reached, when it is another
 * than where the call started; null when it is the same: the call's own destination (a registry
 * tool's name, say) or that of the host it called (`/v1/x` → `/v1/x/`, http → https).
 */
export function redirectedInto(
  table: DestinationTable,
  from: CallTarget | null,
  url: string,
): Destination | null {
  const to = table.resolve({ tool: from?.tool ?? "", registry: false, url });
  if (to === null || from === null) return to;
  if (table.resolve(from)?.key === to.key) return null;
  const fromHost = from.url === null ? null : table.resolve({ ...from, registry: false });
  return fromHost?.key === to.key ? null : to;
}

/**
 * Whether a call may follow a redirect into `to`, another destination than the one it was
 * admitted to (null: the same one). SPEC 10: limits and pauses hold for every call to a
 * destination, a redirected one too. Its slot was taken where it started: a redirect into
 * another destination with limits is not followed (the call would pass them by), and one into
 * a destination paused until `pausedUntil` waits as a 429 would. Null: follow it.
 */
export function redirectRefusal(
  to: Destination | null,
  pausedUntil: number | null,
  now: number,
): AttemptResult | null {
  if (to === null) return null;
  if (limited(to.limits))
    return {
      ok: false,
      category: "egress_denied",
      message: `redirected to ${to.key}, a destination with limits of its own (DESTINATIONS): a call is admitted where it starts, so edgestep does not follow it there; call ${to.key} directly`,
    };
  if (pausedUntil === null) return null;
  return {
    ok: false,
    category: "rate_limited",
    message: `redirected to ${to.key}, which is paused (it answered 429 or 503) until ${new Date(pausedUntil).toISOString()}`,
    retryAfterMs: pausedUntil - now,
  };
}
