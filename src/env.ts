/** The Worker's bindings and the settings derived from them (SPEC 7). */
import { parseDestinations, type DestinationTable } from "./engine/destinations";
import { checkUrl, parseAllowedHosts, type AllowedHosts } from "./engine/egress";
import { MAX_SAFE_DEPTH } from "./engine/json-depth";
import { DEFAULT_MAX_OUTPUT_DEPTH } from "./engine/output";
import { DEFAULT_MAX_STEPS, HARD_MAX_STEPS } from "./engine/plan-schema";
import { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS } from "./engine/retention";
import type { ValidationContext } from "./engine/validate";
import { ConfigurationError } from "./errors";
import type { Fetcher } from "./tools/http-client";
import { ToolSet } from "./tools";
import { parseRegistry } from "./tools/registry";

/**
 * The variables and secrets the Worker reads that wrangler.toml does not declare (SPEC 7).
 * Each may be given as a string (`wrangler dev --var NAME:VALUE`, a secret).
 */
export interface ConfigVars {
  API_KEYS?: string;
  /** "true": refuse /v1 requests while API_KEYS is unset (wrangler.toml's production environment). */
  REQUIRE_API_KEYS?: string | boolean;
  /** "true": with REQUIRE_API_KEYS, serve without authentication all the same (an explicit opt-out). */
  ALLOW_UNAUTHENTICATED?: string | boolean;
  ALLOWED_HOSTS?: string;
  WEBHOOK_SECRET?: string;
  MAX_STEPS_PER_PLAN?: string | number;
  MAX_PLAN_BYTES?: string | number;
  MAX_OUTPUT_BYTES?: string | number;
  MAX_EVENTS_PER_RUN?: string | number;
  WEBHOOK_MAX_ATTEMPTS?: string | number;
  RUNS_PER_MINUTE?: string | number;
  MAX_TEMPLATE_LENGTH?: string | number;
  MAX_JSON_DEPTH?: string | number;
  MAX_OUTPUT_DEPTH?: string | number;
  RUN_RETENTION_DAYS?: string | number;
}

/**
 * The Worker's environment: the bindings `wrangler types` generates from wrangler.toml
 * (worker-configuration.d.ts; `npm run typecheck` checks it is current), and ConfigVars.
 * TOOLS may also be a JSON object rather than a string holding one.
 */
export interface Env
  extends Omit<Cloudflare.Env, "TOOLS" | "ASSETS" | keyof ConfigVars>, ConfigVars {
  TOOLS?: string | Record<string, unknown>;
  /** The console's static assets (wrangler.toml's `[assets]`); absent in the unit tests' Worker. */
  ASSETS?: Cloudflare.Env["ASSETS"];
  /** Limits per destination (SPEC 10): a JSON object, or a string holding one. */
  DESTINATIONS?: string | Record<string, unknown>;
}

export interface Settings {
  maxStepsPerPlan: number;
  maxPlanBytes: number;
  maxOutputBytes: number;
  maxEventsPerRun: number;
  webhookMaxAttempts: number;
  /** Runs one API key may create per minute; 0 turns the limit off. */
  runsPerMinute: number;
  maxTemplateLength: number;
  maxJsonDepth: number;
  /** Nesting of a step's stored output (src/engine/output.ts). */
  maxOutputDepth: number;
  /** Days a final run is kept when its plan sets no `config.retentionDays` (SPEC 8.3). */
  retentionDays: number;
  allowedHosts: AllowedHosts;
  tools: ToolSet;
  /** DESTINATIONS: limits by host or registry tool (SPEC 10). */
  destinations: DestinationTable;
}

/** A whole number of digits (a string), or an integer: `1e3`, `0x10` or `1.5` is refused. */
function intVar(
  value: string | number | undefined,
  fallback: number,
  name: string,
  max = Infinity,
  min = 1,
): number {
  if (value === undefined || value === "") return fallback;
  const n = typeof value === "number" || /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min) {
    const kind = min === 0 ? "a whole number (0 or more)" : "a positive integer";
    throw new Error(`${name} must be ${kind}, got "${value}"`);
  }
  return Math.min(n, max);
}

/** `true`/`"true"`/`"1"` or `false`/`"false"`/`"0"`/unset, any case: anything else is a deployment error. */
export function boolVar(value: string | boolean | undefined, name: string): boolean {
  if (typeof value === "boolean") return value;
  const v = (value ?? "").trim().toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0" || v === "") return false;
  throw invalidConfiguration(`${name} must be "true" or "false", got "${value}"`);
}

/** The error every request that needs a bad variable answers with (500 misconfigured). */
export function invalidConfiguration(message: string, cause?: unknown): ConfigurationError {
  const text = `the deployment's configuration is invalid: ${message}`;
  return new ConfigurationError(text, cause === undefined ? undefined : { cause });
}

const cache = new WeakMap<object, Settings>();

/**
 * Settings of this Worker, parsed once per env object. A bad variable is a deployment error:
 * a ConfigurationError naming it, which every request that needs the settings answers with.
 */
export function settings(env: Env, fetcher: Fetcher = (r) => fetch(r)): Settings {
  const cached = cache.get(env);
  if (cached) return cached;
  let result: Settings;
  try {
    result = parseSettings(env, fetcher);
  } catch (err) {
    throw invalidConfiguration(err instanceof Error ? err.message : String(err), err);
  }
  cache.set(env, result);
  return result;
}

/**
 * `env` with some of its bindings replaced (per request), sharing its settings: they are parsed
 * once per Worker, not once per request.
 */
export function withBindings(env: Env, bindings: Partial<Env>): Env {
  const derived = { ...env, ...bindings };
  try {
    cache.set(derived, settings(env));
  } catch {
    // A bad variable: `settings(derived)` throws the same error where the settings are needed.
  }
  return derived;
}

function parseSettings(env: Env, fetcher: Fetcher): Settings {
  const bindings = env as unknown as Record<string, unknown>;
  const allowedHosts = parseAllowedHosts(env.ALLOWED_HOSTS);
  const tools = new ToolSet({
    registry: parseRegistry(env.TOOLS),
    allowedHosts,
    fetcher,
    service: (name) => {
      const binding = bindings[name] as { fetch?: unknown } | undefined;
      return typeof binding?.fetch === "function"
        ? (r) => (binding as Fetcher & { fetch: Fetcher }).fetch(r)
        : undefined;
    },
    secret: (name) => {
      const v = bindings[name];
      return typeof v === "string" ? v : undefined;
    },
  });
  return {
    maxStepsPerPlan: intVar(
      env.MAX_STEPS_PER_PLAN,
      DEFAULT_MAX_STEPS,
      "MAX_STEPS_PER_PLAN",
      HARD_MAX_STEPS,
    ),
    maxPlanBytes: intVar(env.MAX_PLAN_BYTES, 1_048_576, "MAX_PLAN_BYTES"),
    // Capped at 1 MiB: an output is one SQLite value, and a Durable Object's values hold at most 2 MB.
    maxOutputBytes: intVar(env.MAX_OUTPUT_BYTES, 262_144, "MAX_OUTPUT_BYTES", 1_048_576),
    maxEventsPerRun: intVar(env.MAX_EVENTS_PER_RUN, 50_000, "MAX_EVENTS_PER_RUN"),
    webhookMaxAttempts: intVar(env.WEBHOOK_MAX_ATTEMPTS, 6, "WEBHOOK_MAX_ATTEMPTS", 20),
    runsPerMinute: intVar(env.RUNS_PER_MINUTE, 600, "RUNS_PER_MINUTE", Infinity, 0),
    maxTemplateLength: intVar(env.MAX_TEMPLATE_LENGTH, 1024, "MAX_TEMPLATE_LENGTH"),
    // Capped: a plan crosses an RPC (structured clone), which overflows some thousands of levels down.
    maxJsonDepth: intVar(env.MAX_JSON_DEPTH, 64, "MAX_JSON_DEPTH", MAX_SAFE_DEPTH),
    maxOutputDepth: intVar(
      env.MAX_OUTPUT_DEPTH,
      DEFAULT_MAX_OUTPUT_DEPTH,
      "MAX_OUTPUT_DEPTH",
      MAX_SAFE_DEPTH,
    ),
    retentionDays: intVar(
      env.RUN_RETENTION_DAYS,
      DEFAULT_RETENTION_DAYS,
      "RUN_RETENTION_DAYS",
      MAX_RETENTION_DAYS,
    ),
    allowedHosts,
    tools,
    destinations: parseDestinations(env.DESTINATIONS, tools.registryNames),
  };
}

export function validationContext(s: Settings): ValidationContext {
  return {
    maxSteps: s.maxStepsPerPlan,
    maxTemplateLength: s.maxTemplateLength,
    maxPlanBytes: s.maxPlanBytes,
    tool: (name) => s.tools.spec(name),
    checkUrl: (url) => checkUrl(url, s.allowedHosts),
  };
}
