/** The one interface every tool implements. The scheduler knows nothing of HTTP. */
import type { ToolSpec } from "../engine/validate";
import type { ErrorCategory } from "../engine/retry";
import type { AttemptResult, Suspension } from "../engine/verdict";
import type { z } from "zod";
import { zodIssues } from "../engine/zod-issues";

/** The built-in tools (SPEC 4); a `TOOLS` entry may not take one of these names. */
export const BUILT_IN_TOOL_NAMES: ReadonlySet<string> = new Set([
  "http",
  "pass",
  "wait",
  "approval",
  "callback",
]);

/** Everything a tool may know about the attempt it serves. */
export interface ToolCall {
  runId: string;
  stepId: string;
  itemIndex?: number;
  attempt: number;
  /** `<runId>:<stepId>[:<itemIndex>]`: the same across retries of the step. */
  idempotencyKey: string;
  timeoutMs: number;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  maxOutputBytes: number;
  /** Nesting allowed in parsed data (MAX_OUTPUT_DEPTH): checked on the text, before parsing. */
  maxOutputDepth: number;
  /** When the attempt started (tools that wait measure from it). */
  now: number;
  /** For the `callback` tool: the single-use token, already stored, and the URL that completes it. */
  callback?: { token: string; url: string };
  /**
   * Whether the call may follow a redirect to `url` (SPEC 10: a destination's limits and pauses
   * hold for every call to it, a redirected one too): null to follow it, else the attempt's result.
   */
  redirect?: (url: string) => ToolResult | null;
}

/** A tool's answer for one attempt (see src/engine/verdict.ts, which judges it). */
export type ToolResult = AttemptResult;
export type { Suspension };

export interface Tool extends ToolSpec {
  readonly name: string;
  invoke(params: Record<string, unknown>, call: ToolCall): Promise<ToolResult>;
  /**
   * The same answer as `invoke`, at once, for a tool that reaches nothing outside the run and
   * never waits (`pass`): its attempt is recorded together with its outcome, one write per
   * row rather than a record before the call and another after it (there is no call to be
   * interrupted in between).
   */
  answerNow?(params: Record<string, unknown>): ToolResult;
}

export function toolFailure(
  category: ErrorCategory,
  message: string,
  extra: { status?: number; retryAfterMs?: number } = {},
): ToolResult {
  return { ok: false, category, message, ...extra };
}

/** An attempt's params that do not fit its tool once templates are resolved: each issue at its path. */
export function invalidParams(tool: string, error: z.ZodError): ToolResult {
  const issues = zodIssues(error).map((i) => `${i.path}: ${i.message}`);
  return {
    ok: false,
    category: "invalid_data",
    message: `invalid ${tool} params: ${issues.join("; ")}`,
  };
}
