/** The one interface every tool implements. The scheduler knows nothing of HTTP. */
import type { ToolSpec } from "../engine/validate";
import type { ErrorCategory } from "../engine/retry";

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
}

export type ToolResult =
  | { ok: true; data: unknown; status?: number }
  | { ok: false; category: ErrorCategory; message: string; status?: number; retryAfterMs?: number }
  /** The step waits durably (an alarm, never a timer): until `until`, or for an outside answer. */
  | { suspend: Suspension };

export type Suspension =
  | { waitingFor: "timer"; until: number }
  | { waitingFor: "approval" }
  | { waitingFor: "callback"; until: number; token: string };

export interface Tool extends ToolSpec {
  readonly name: string;
  invoke(params: Record<string, unknown>, call: ToolCall): Promise<ToolResult>;
}

export function toolFailure(
  category: ErrorCategory,
  message: string,
  extra: { status?: number; retryAfterMs?: number } = {},
): ToolResult {
  return { ok: false, category, message, ...extra };
}
