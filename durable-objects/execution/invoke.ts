/**
 * Prepares and starts one tool attempt (a step, one forEach item, or a compensation):
 * resolves templates, finds the tool, issues a callback token when needed, and calls the
 * tool with a timeout and an abort handle. The caller has already recorded the attempt.
 */
import type { OutputLimits } from "../../src/engine/output";
import type { CompiledStep } from "../../src/engine/plan";
import { resolveTemplates, templateError, type TemplateContext } from "../../src/engine/templates";
import type { ToolSet } from "../../src/tools";
import type { ToolCall, ToolResult } from "../../src/tools/tool";
import { newCallbackToken } from "../../src/ids";
import type { CallbackTable } from "../storage/callback-table";

export interface Invoker {
  tools: ToolSet;
  callbacks: CallbackTable;
  runId: string;
  baseUrl: string | null;
  output: OutputLimits;
}

export type Invocation =
  | { type: "started"; controller: AbortController; result: Promise<ToolResult> }
  | { type: "failed"; result: ToolResult };

export function invoke(
  deps: Invoker,
  step: CompiledStep,
  attempt: number,
  context: TemplateContext,
  now: number,
  itemIndex?: number,
): Invocation {
  let params: Record<string, unknown>;
  try {
    params = resolveTemplates(step.params, context) as Record<string, unknown>;
  } catch (err) {
    return { type: "failed", result: { ok: false, ...templateError(err) } };
  }
  const tool = deps.tools.get(step.tool);
  if (!tool) {
    return {
      type: "failed",
      result: {
        ok: false,
        category: "tool_not_found",
        message: `tool "${step.tool}" is not configured`,
      },
    };
  }
  const controller = new AbortController();
  const suffix = itemIndex === undefined ? "" : `:${itemIndex}`;
  const call: ToolCall = {
    runId: deps.runId,
    stepId: step.id,
    ...(itemIndex !== undefined && { itemIndex }),
    attempt,
    idempotencyKey: `${deps.runId}:${step.id}${suffix}`,
    timeoutMs: step.timeoutMs,
    signal: controller.signal,
    maxOutputBytes: deps.output.maxOutputBytes,
    maxOutputDepth: deps.output.maxOutputDepth,
    now,
  };
  if (step.tool === "callback") {
    const token = newCallbackToken(deps.runId);
    deps.callbacks.open(token, step.index, attempt, now);
    call.callback = { token, url: `${deps.baseUrl ?? "http://localhost"}/v1/callbacks/${token}` };
  }
  const result = tool.invoke(params, call).catch((err: unknown): ToolResult => ({
    ok: false,
    category: "network",
    message: String(err),
  }));
  return { type: "started", controller, result };
}
